"""Budget threading (`fix --thread-budget`): give a function with outbound calls a budget and pass
it on to its callees, within a module and across a project."""

"""Vocabularies several families read: the budget in scope, exceptions and statuses, time values,
the lifecycle of code no request waits for."""

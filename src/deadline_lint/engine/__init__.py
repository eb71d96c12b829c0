"""The engine: read a file once, parse it once, walk it once and hand each node to the rules that
asked for it. It knows no rule family: rules register themselves through `engine.rule`."""

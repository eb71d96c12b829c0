"""The Language Server: `server` (the protocol), `server_shapes` (findings and edits as LSP
shapes, code actions), `server_engine` (all it asks of the run), `server_io` (bounded reads)."""

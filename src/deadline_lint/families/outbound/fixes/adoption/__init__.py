"""Adoption: where requests enter (edges), and the budget minted there."""

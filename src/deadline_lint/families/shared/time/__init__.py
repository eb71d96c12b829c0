"""Time values: clock reads, wall-clock instants and the deadlines built from them, within a
function and across one."""

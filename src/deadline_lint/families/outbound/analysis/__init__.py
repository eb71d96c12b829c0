"""The outbound family's analyses: which calls leave the process, the client classes behind
receivers, wrappers, and the project facts about them."""

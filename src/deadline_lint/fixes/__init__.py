"""The fix loop: apply the rules' text edits, prove the result, and write it back all or nothing."""

"""The change feed (Watch): cursors, the changes of a log entry, the watch loop."""

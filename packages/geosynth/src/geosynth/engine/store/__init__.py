"""The fact store: SQLite tables over union-find classes, read by the rules and by the algebra."""

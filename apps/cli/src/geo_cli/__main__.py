"""``python -m geo_cli`` runs the geo app."""

from geo_cli.main import app

app()

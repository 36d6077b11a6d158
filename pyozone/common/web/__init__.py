"""Every daemon's web server: operator endpoints (ops), metrics (metrics), JSON APIs (api), the UI (app)."""

"""The API's reference pages, ``/docs`` (Swagger UI) and ``/redoc``, served with everything they load.

FastAPI's own pages load their scripts, styles and fonts from public CDNs, so on a studio network without the
internet they are blank. Here the assets come from the ``fastapi-offline`` package (Swagger UI and ReDoc as
released, nothing of ours) under ``/api-docs-assets``; Swagger UI's online validator badge and ReDoc's web fonts
are off, and ReDoc's script is served with its one image from a CDN (the "by Redocly" logo) pointed at the local
icon, so neither page asks another host for anything.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS = "/api-docs-assets"
STATIC = files("fastapi_offline") / "static"
REDOC_SCRIPT = "/api-docs/redoc.js"
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


@cache
def redoc_script() -> bytes:
    return (STATIC / "redoc.standalone.js").read_text().replace(REDOC_LOGO, f"{ASSETS}/favicon.png").encode()


def serve(app: FastAPI) -> None:
    """Add ``/docs`` and ``/redoc`` (the app is made with ``docs_url=None, redoc_url=None``) and their assets."""
    app.mount(ASSETS, StaticFiles(directory=str(STATIC)), name="api-docs-assets")
    openapi = app.openapi_url or "/openapi.json"
    redirect = app.swagger_ui_oauth2_redirect_url

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} — API reference",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
            oauth2_redirect_url=redirect,
            swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from the public validator
        )

    if redirect:

        @app.get(redirect, include_in_schema=False)
        def swagger_ui_redirect() -> HTMLResponse:
            return get_swagger_ui_oauth2_redirect_html()

    @app.get(REDOC_SCRIPT, include_in_schema=False)
    def redoc_js() -> Response:
        headers = {"Cache-Control": "public, max-age=86400"}
        return Response(redoc_script(), media_type="text/javascript", headers=headers)

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} — API reference",
            redoc_js_url=REDOC_SCRIPT,
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            with_google_fonts=False,
        )

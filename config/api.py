"""The JSON API (django-ninja): to be filled by the API work."""

from ninja import NinjaAPI

api = NinjaAPI(title="Factdesk API", version="1", urls_namespace="api")

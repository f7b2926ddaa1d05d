app_name = "factcheck"
urlpatterns: list = []

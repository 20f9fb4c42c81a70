"""URL routes: each app owns its own urls module. /healthz and /readyz are answered by
teachlab.core.health's middleware, before the host check."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

# A locked or unreachable database answers 503 with a message and Retry-After (dbbusy.py).
handler500 = "teachlab.core.dbbusy.server_error"


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers and tools that ask for /favicon.ico get the SVG every page links to (its
    hashed name in production, so the URL is resolved per request, not at import)."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("", include("lessons.urls")),
    path("lab/", include("teachlab.lab.web.urls")),
    path("workshop/", include("teachlab.workshop.urls")),
    # Throttled by django-axes (settings.AXES_*), as is the admin's sign-in.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Named apart from admin.site.urls so the fuzzer's target for it stays (axes throttles it).
    path("admin/login/", admin.site.login),
    path("admin/", admin.site.urls),
]

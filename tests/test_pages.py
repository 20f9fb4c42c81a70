"""Pages outside any app: an address that matches no route gets the site's own 404."""

import pytest


@pytest.mark.django_db
def test_an_unknown_address_gets_the_sites_404_page_with_navigation(client, settings):
    settings.DEBUG = False
    response = client.get("/nowhere/at-all/")
    assert response.status_code == 404
    html = response.content.decode()
    assert '<html lang="en" data-theme="system">' in html
    assert "Nothing here" in html
    assert 'href="/lab/"' in html


@pytest.mark.django_db
def test_the_404_page_says_why_when_a_view_gave_a_reason_and_never_shows_resolver_internals(
    client, settings
):
    settings.DEBUG = False
    assert "Resolver404" not in client.get("/nowhere/").content.decode()
    missing_run = client.get("/lab/runs/not-a-run/").content.decode()
    assert "Nothing here" in missing_run

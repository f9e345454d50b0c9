"""Django's own pages (home, log in, log out) and the agent's endpoints under /agent/."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from django.views.generic import TemplateView

from agent_smith.web.django import agent_urls

from .agents import agent_app

urlpatterns = [
    path("", login_required(TemplateView.as_view(template_name="home.html")), name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("agent/", include(agent_urls(agent_app))),
]

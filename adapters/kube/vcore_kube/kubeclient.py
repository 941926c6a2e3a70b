"""Connections to the API server through the official `kubernetes` client, with raw JSON in and out.

The client's model classes are skipped on purpose: deserializing a response into models runs at a few
thousand objects per second, while vcore's converter takes API dicts directly. Every call here goes through
the client's own configuration, authentication, TLS and connection pool (``ApiClient.call_api``) and returns
the parsed JSON body; errors are the client's ``ApiException`` with the HTTP status.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

__all__ = ["ApiException", "Api", "load_api"]

JSON = "application/json"


def load_api(kubeconfig: str | None = None, *, pool_size: int = 16, context: str | None = None) -> "Api":
    """An Api for a kubeconfig file, or the in-cluster service account when kubeconfig is None."""
    configuration = client.Configuration()
    if kubeconfig:
        config.load_kube_config(config_file=str(kubeconfig), context=context, client_configuration=configuration)
    else:
        config.load_incluster_config(client_configuration=configuration)
    # One connection per concurrent caller (bind workers, watches, status writers): no caller waits for a socket.
    configuration.connection_pool_maxsize = pool_size
    configuration.retries = False  # retries are the caller's decision (a bind is not blindly repeatable)
    return Api(client.ApiClient(configuration))


class Api:
    """Raw JSON requests on one ApiClient; safe to share between threads (urllib3's pool is thread-safe)."""

    def __init__(self, api_client: client.ApiClient) -> None:
        self.api_client = api_client
        self.host = api_client.configuration.host

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": JSON}
        if content_type:
            headers["Content-Type"] = content_type
        self.api_client.update_params_for_auth(headers, None, ["BearerToken"], "", "", None)
        return headers

    def url(self, path: str, query: dict[str, Any] | None = None) -> str:
        q = {k: ("true" if v is True else "false" if v is False else v) for k, v in (query or {}).items()
             if v is not None}
        return self.host + path + ("?" + urlencode(q) if q else "")

    def open(self, method: str, path: str, *, query: dict[str, Any] | None = None, body: Any = None,
             content_type: str | None = None, timeout: Any = None):
        """Send a request and return the urllib3 response unread (streams: watches, large lists).
        Raises ApiException for a status >= 400 (the body is read for the message)."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body, separators=(",", ":"))
        response = self.api_client.rest_client.pool_manager.request(
            method, self.url(path, query), body=body, headers=self._headers(content_type or (JSON if body else None)),
            timeout=_timeout(timeout), preload_content=False)
        if response.status >= 400:
            data = response.read()
            response.release_conn()
            raise ApiException(status=response.status, reason=response.reason, http_resp=_Raw(response, data))
        return response

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None, body: Any = None,
                content_type: str | None = None, timeout: Any = 30) -> Any:
        """Send a request and return the parsed JSON body (None when empty)."""
        response = self.open(method, path, query=query, body=body, content_type=content_type, timeout=timeout)
        try:
            data = response.read()
        finally:
            response.release_conn()
        return json.loads(data) if data else None

    # Query parameters are keyword arguments (the API's own names: fieldSelector, resourceVersion, ...);
    # `timeout` is the client-side request timeout in seconds, never sent.
    def get(self, path: str, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("GET", path, query=query, timeout=timeout)

    def create(self, path: str, body: Any, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("POST", path, body=body, query=query, timeout=timeout)

    def patch(self, path: str, body: Any, *, patch_type: str = "merge", timeout: Any = 30, **query: Any) -> Any:
        content = {"merge": "application/merge-patch+json", "strategic": "application/strategic-merge-patch+json",
                   "json": "application/json-patch+json", "apply": "application/apply-patch+yaml"}[patch_type]
        return self.request("PATCH", path, body=body, content_type=content, query=query, timeout=timeout)

    def put(self, path: str, body: Any, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("PUT", path, body=body, query=query, timeout=timeout)

    def delete(self, path: str, body: Any = None, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("DELETE", path, body=body, query=query, timeout=timeout)

    def close(self) -> None:
        self.api_client.close()


def pod_path(namespace: str, name: str, subresource: str = "") -> str:
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"
    return f"{path}/{subresource}" if subresource else path


def _timeout(timeout: Any) -> urllib3.Timeout:
    if timeout is None:
        return urllib3.Timeout(connect=10, read=None)
    if isinstance(timeout, tuple):
        return urllib3.Timeout(connect=timeout[0], read=timeout[1])
    return urllib3.Timeout(connect=min(timeout, 10), read=timeout)


class _Raw:
    """What ApiException reads from an HTTP response (status, reason, body, headers)."""

    def __init__(self, response, data: bytes) -> None:
        self.status, self.reason, self.data, self.headers = response.status, response.reason, data, response.headers

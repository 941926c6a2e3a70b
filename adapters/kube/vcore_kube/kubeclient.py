"""Connections to the API server through the official `kubernetes` client, with raw JSON in and out.

The client's model classes are skipped on purpose: deserializing a response into models runs at a few
thousand objects per second, while vcore's converter takes API dicts directly. Every call uses the client's own
configuration and authentication (a refreshed token included); errors are the client's ``ApiException`` with
the HTTP status.

Two transports: streams (watches, lists) use the client's urllib3 pool; single requests (bindings, events,
status patches, the lease) use one keep-alive ``http.client`` connection per thread, with the same TLS
settings. Measured on the test control plane, a binding costs 590 us of client CPU through urllib3's pool
manager and 271 us this way (and on two cores, the client's CPU is the API server's loss).
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

if TYPE_CHECKING:
    from urllib3 import BaseHTTPResponse


__all__ = ["ApiException", "Api", "KubeconfigError", "load_api"]

JSON = "application/json"


class KubeconfigError(config.ConfigException, ValueError):
    """The credentials cannot be loaded: the kubeconfig is missing or malformed, or not running in a cluster. (A
    ConfigException, as the client raises for some of these, so callers catching that see every case.)"""


def load_api(kubeconfig: str | None = None, *, pool_size: int = 16, context: str | None = None) -> Api:
    """An Api for a kubeconfig file, or the in-cluster service account when kubeconfig is None."""
    configuration = client.Configuration()
    if kubeconfig and not os.path.isfile(kubeconfig):
        raise KubeconfigError(f"--kubeconfig {kubeconfig}: no such file")
    try:
        if kubeconfig:
            config.load_kube_config(config_file=str(kubeconfig), context=context, client_configuration=configuration)
        else:
            config.load_incluster_config(client_configuration=configuration)
    # The client reads the file's YAML as it finds it: a malformed one surfaces as any of these.
    except (config.ConfigException, OSError, yaml.YAMLError, TypeError, AttributeError, KeyError, ValueError) as e:
        where = f"--kubeconfig {kubeconfig}" if kubeconfig else "in-cluster credentials (no --kubeconfig)"
        raise KubeconfigError(f"{where}: {_kubeconfig_problem(e)}") from None
    # One connection per concurrent caller (bind workers, watches, status writers): no caller waits for a socket.
    configuration.connection_pool_maxsize = pool_size
    configuration.retries = False  # retries are the caller's decision (a bind is not blindly repeatable)
    return Api(client.ApiClient(configuration))


def _kubeconfig_problem(e: Exception) -> str:
    text = " ".join(str(e).split())  # one line
    if isinstance(e, config.ConfigException):
        return text
    if isinstance(e, OSError):
        return e.strerror or text
    if isinstance(e, yaml.YAMLError):
        return f"not valid YAML: {text}"
    return f"not a valid kubeconfig ({type(e).__name__}: {text})"


class Api:
    """Raw JSON requests on one ApiClient; safe to share between threads (urllib3's pool is thread-safe)."""

    def __init__(self, api_client: client.ApiClient) -> None:
        self.api_client = api_client
        self.host = api_client.configuration.host
        self._direct = _Direct(api_client.configuration)

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": JSON}
        if content_type:
            headers["Content-Type"] = content_type
        self.api_client.update_params_for_auth(headers, None, ["BearerToken"], "", "", None)
        return headers

    def url(self, path: str, query: dict[str, Any] | None = None) -> str:
        q = {
            k: ("true" if v is True else "false" if v is False else v)
            for k, v in (query or {}).items()
            if v is not None
        }
        return self.host + path + ("?" + urlencode(q) if q else "")

    def open(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: Any = None,
    ) -> BaseHTTPResponse:
        """Send a request and return the urllib3 response unread (streams: watches, large lists).
        Raises ApiException for a status >= 400 (the body is read for the message)."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body, separators=(",", ":"))
        response = self.api_client.rest_client.pool_manager.request(
            method,
            self.url(path, query),
            body=body,
            headers=self._headers(content_type or (JSON if body else None)),
            timeout=_timeout(timeout),
            preload_content=False,
        )
        if response.status >= 400:
            data = response.read()
            response.release_conn()
            raise ApiException(
                status=response.status,
                reason=response.reason,
                http_resp=_Raw(response.status, response.reason, data, response.headers),
            )
        return response

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: Any = 30,
    ) -> Any:
        """Send a request and return the parsed JSON body (None when empty). Connection failures raise
        ConnectionError (or TimeoutError); an HTTP status >= 400 raises ApiException."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body, separators=(",", ":"))
        url = self.url(path, query)[len(self.host) :]
        headers = self._headers(content_type or (JSON if body else None))
        status, reason, data, response_headers = self._direct.request(method, url, body, headers, _seconds(timeout))
        if status >= 400:
            raise ApiException(status=status, reason=reason, http_resp=_Raw(status, reason, data, response_headers))
        return json.loads(data) if data else None

    # Query parameters are keyword arguments (the API's own names: fieldSelector, resourceVersion, ...);
    # `timeout` is the client-side request timeout in seconds, never sent.
    def get(self, path: str, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("GET", path, query=query, timeout=timeout)

    def create(self, path: str, body: Any, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("POST", path, body=body, query=query, timeout=timeout)

    def patch(self, path: str, body: Any, *, patch_type: str = "merge", timeout: Any = 30, **query: Any) -> Any:
        content = {
            "merge": "application/merge-patch+json",
            "strategic": "application/strategic-merge-patch+json",
            "json": "application/json-patch+json",
            "apply": "application/apply-patch+yaml",
        }[patch_type]
        return self.request("PATCH", path, body=body, content_type=content, query=query, timeout=timeout)

    def put(self, path: str, body: Any, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("PUT", path, body=body, query=query, timeout=timeout)

    def delete(self, path: str, body: Any = None, *, timeout: Any = 30, **query: Any) -> Any:
        return self.request("DELETE", path, body=body, query=query, timeout=timeout)

    def close(self) -> None:
        self._direct.close()
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


def _seconds(timeout: Any) -> float | None:
    if isinstance(timeout, tuple):
        return timeout[1]
    return timeout


class _Raw:
    """What ApiException reads from an HTTP response (status, reason, body, headers)."""

    def __init__(self, status: int, reason: str | None, data: bytes, headers: Any) -> None:
        self.status, self.reason, self.data, self.headers = status, reason, data, headers


class _Direct:
    """One keep-alive http.client connection per thread, with the configuration's TLS settings (CA, client
    certificate, verification). A connection idle for longer than IDLE_SECONDS is replaced before use (servers
    close idle ones: Go's net/http after 90 s); a request on a kept-alive connection that the server closed
    anyway (it ended the connection without a word) is sent again once on a fresh connection; any other
    failure is the caller's."""

    IDLE_SECONDS = 30.0

    def __init__(self, configuration: client.Configuration) -> None:
        url = urlsplit(configuration.host)
        if url.hostname is None:
            raise ValueError(f"kubernetes client configuration: host: no host name in {configuration.host!r}")
        self.https = url.scheme == "https"
        self.host, self.port = url.hostname, url.port or (443 if self.https else 80)
        self.context = None
        if self.https:
            self.context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
            if not configuration.verify_ssl:
                self.context.check_hostname = False
                self.context.verify_mode = ssl.CERT_NONE
            if configuration.cert_file:
                self.context.load_cert_chain(configuration.cert_file, configuration.key_file)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[http.client.HTTPConnection] = []

    def _connection(self, timeout: float | None) -> tuple[http.client.HTTPConnection, bool]:
        conn = getattr(self._local, "conn", None)
        now = time.monotonic()
        if conn is not None and now - getattr(self._local, "used", now) > self.IDLE_SECONDS:
            self._drop(conn)
            conn = None
        self._local.used = now
        reused = conn is not None
        if conn is None:
            conn = (
                http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)
                if self.https
                else http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            )
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        elif conn.sock is not None:
            conn.sock.settimeout(timeout)
        conn.timeout = timeout
        return conn, reused

    def request(
        self, method: str, url: str, body: bytes | str | None, headers: dict[str, Any], timeout: float | None
    ) -> tuple[int, str, bytes, http.client.HTTPMessage]:
        for attempt in (0, 1):
            conn, reused = self._connection(timeout)
            sent = False
            try:
                conn.request(method, url, body=body, headers=headers)
                sent = True
                response = conn.getresponse()
                data = response.read()
                return response.status, response.reason, data, response.headers
            except (
                http.client.RemoteDisconnected,
                BrokenPipeError,
                ConnectionResetError,
                ssl.SSLEOFError,
                ssl.SSLZeroReturnError,
            ) as e:
                self._drop(conn)
                # Closed before answering: the request was not processed (a processed one gets its answer).
                closed = isinstance(e, (http.client.RemoteDisconnected, ssl.SSLEOFError, ssl.SSLZeroReturnError))
                stale = reused and (not sent or closed)
                if attempt == 0 and stale:
                    continue  # the server had closed the idle connection before reading the request
                raise ConnectionError(f"{method} {url}: {e}") from None
            except (http.client.HTTPException, OSError) as e:
                self._drop(conn)
                if isinstance(e, TimeoutError):
                    raise
                raise ConnectionError(f"{method} {url}: {type(e).__name__}: {e}") from None
        raise AssertionError("unreachable")

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        self._local.conn = None
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()

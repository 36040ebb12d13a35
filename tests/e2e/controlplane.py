"""A real Kubernetes control plane for the e2e tier: etcd, kube-apiserver, kube-controller-manager and
kube-scheduler built from Go modules by `scripts/engines.sh`, started on loopback inside a network
namespace of the test process's own, so nothing they (or the tests) start can reach another address.

The API is small on purpose: server-side apply, get, list, delete and a poll, over the REST API with
the admin client certificate. Objects are plain dicts, as `render` writes them.
"""

from __future__ import annotations

import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ROOT / "scripts" / "engines.sh"
ENABLE = "bash scripts/engines.sh"  # the one command that makes the e2e tier run
FIELD_MANAGER = "eks-devices-e2e"
CLONE_NEWNET = 0x40000000  # <linux/sched.h>


class EnginesMissing(RuntimeError):
    """The engines are not built (or cannot run here): the e2e tier cannot run."""


class ApiError(RuntimeError):
    """The API server refused a request: its HTTP status and its own message."""

    def __init__(self, status: int, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.body = body or {}


def engines_bin() -> Path:
    """The folder of built engines, from `scripts/engines.sh --print` (never builds)."""
    if shutil.which("go") is None:
        raise EnginesMissing("Go is not installed")
    done = subprocess.run(["bash", str(ENGINES), "--print"], capture_output=True, text=True, check=False)
    path = Path(done.stdout.strip()) if done.returncode == 0 else None
    if path is None or not path.is_dir():
        raise EnginesMissing("the engines are not built")
    return path


_isolated = False


def isolate_network() -> None:
    """Move this process (its main thread and every child started after) into a new network
    namespace holding only loopback. Needs root (CAP_SYS_ADMIN); done once per process."""
    global _isolated
    if _isolated:
        return
    if threading.current_thread() is not threading.main_thread():
        raise EnginesMissing("the network namespace must be entered from the main thread")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise EnginesMissing(f"cannot enter a network namespace of our own: {os.strerror(err)} (needs root)")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True, capture_output=True)
    _isolated = True


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(folder: Path) -> None:
    """A throwaway CA, the API server's serving certificate, an admin client certificate
    (group system:masters) and the service-account signing key, valid for two days."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=eks-devices-e2e-ca", cwd=folder)
    sans = "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc,IP:10.0.0.1"
    for name, subject, ext in (("apiserver", "/CN=kube-apiserver", sans),
                               ("admin", "/O=system:masters/CN=admin", "extendedKeyUsage=clientAuth")):
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=folder)
        (folder / f"{name}.ext").write_text(ext + "\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=folder)
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", "sa.key", cwd=folder)
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=folder)


def _kubeconfig(folder: Path, server: str) -> Path:
    path = folder / "admin.kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "e2e",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": str(folder / "ca.crt")}}],
        "users": [{"name": "admin", "user": {"client-certificate": str(folder / "admin.crt"),
                                             "client-key": str(folder / "admin.key")}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "admin"}}],
    }))
    return path


@dataclass(frozen=True)
class Resource:
    """Where the API serves one kind: its path prefix, plural and whether objects live in namespaces."""

    prefix: str
    plural: str
    namespaced: bool


@dataclass(frozen=True)
class Ports:
    """The loopback ports of one control plane; `slot` n > 0 shifts each by 10·n, so several control planes
    run side by side in one network namespace (slot 0 holds the components' usual ports)."""

    slot: int = 0

    def _at(self, port: int) -> int:
        return port + 10 * self.slot

    @property
    def etcd_client(self) -> int:
        return self._at(2379)

    @property
    def etcd_peer(self) -> int:
        return self._at(2380)

    @property
    def apiserver(self) -> int:
        return self._at(6443)

    @property
    def controller_manager(self) -> int:
        return self._at(10257)

    @property
    def scheduler(self) -> int:
        return self._at(10259)


@dataclass
class ControlPlane:
    """A running control plane; `start()` brings it up, `stop()` ends every process it started.

    `emulated` ("1.34"; empty: the binaries' own minor) is given to kube-apiserver, kube-controller-manager and
    kube-scheduler as `--emulated-version`: each then serves the APIs, defaults and feature gates of that
    minor (KEP-4330 compatibility versions; the 1.36 binaries accept 1.33 to 1.36), as a cluster of that
    minor would. etcd is not versioned by it."""

    bin_dir: Path
    folder: Path
    feature_gates: str = ""
    emulated: str = ""
    ports: Ports = field(default_factory=Ports)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _kinds: dict[tuple[str, str], Resource] = field(default_factory=dict)
    _tls: ssl.SSLContext | None = None
    _local: threading.local = field(default_factory=threading.local)  # each thread's kept-alive connection
    _opened: list[http.client.HTTPSConnection] = field(default_factory=list)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports.apiserver}"

    @property
    def kubeconfig(self) -> Path:
        return self.folder / "admin.kubeconfig"

    @property
    def crds(self) -> Path:
        """The folder of the Karpenter CRDs `karpenter-crds` wrote from Karpenter's Go API package."""
        return self.bin_dir.parent / "karpenter"

    @property
    def karpenter_dra_metadata(self) -> Path:
        """The DRA device metadata Karpenter's AWS provider scraped from running instances, per instance
        type (its `drametadata` package, as `karpenter-crds` wrote it), at the chart's pinned release."""
        return self.crds / "dra-metadata.json"

    def karpenter_release(self, release: str) -> tuple[Path, Path]:
        """The DRA device metadata and the `karpenter-scheduler` built at another release of Karpenter's AWS
        provider (scripts/engines.sh builds one per `karpenter-v<release>.mod`)."""
        return (self.bin_dir.parent / f"karpenter-v{release}" / "dra-metadata.json",
                self.bin_dir / f"karpenter-scheduler-v{release}")

    # -- lifecycle -------------------------------------------------------------------------------
    def _spawn(self, name: str, *args: str) -> None:
        with (self.folder / f"{name}.log").open("wb") as log:  # the child keeps its own descriptor
            self.processes.append(subprocess.Popen([str(self.bin_dir / name), *args], stdout=log, stderr=log,
                                                   cwd=self.folder, start_new_session=True))

    def start(self, timeout: float = 90) -> ControlPlane:
        make_pki(self.folder)
        _kubeconfig(self.folder, self.server)
        f, ports = self.folder, self.ports
        etcd = f"http://127.0.0.1:{ports.etcd_client}"
        self._spawn("etcd", "--data-dir", str(f / "etcd"), "--listen-client-urls", etcd,
                    "--advertise-client-urls", etcd, "--listen-peer-urls", f"http://127.0.0.1:{ports.etcd_peer}",
                    "--unsafe-no-fsync", "--log-level", "warn")
        gates = [f"--feature-gates={self.feature_gates}"] if self.feature_gates else []
        if self.emulated:
            gates.append(f"--emulated-version=kube={self.emulated}")
        self._spawn("kube-apiserver", f"--etcd-servers={etcd}", "--bind-address=127.0.0.1",
                    "--advertise-address=127.0.0.1", f"--secure-port={ports.apiserver}",
                    f"--tls-cert-file={f / 'apiserver.crt'}", f"--tls-private-key-file={f / 'apiserver.key'}",
                    f"--client-ca-file={f / 'ca.crt'}", "--service-account-issuer=https://kubernetes.default.svc",
                    f"--service-account-key-file={f / 'sa.pub'}",
                    f"--service-account-signing-key-file={f / 'sa.key'}",
                    "--service-cluster-ip-range=10.0.0.0/24", "--endpoint-reconciler-type=none",
                    "--authorization-mode=RBAC", "--allow-privileged=true",
                    # Pods in fresh namespaces are created before the default service account exists.
                    "--disable-admission-plugins=ServiceAccount", *gates)
        self._wait_ready("/readyz", timeout)
        kube = str(self.kubeconfig)
        common = [f"--kubeconfig={kube}", f"--authentication-kubeconfig={kube}",
                  f"--authorization-kubeconfig={kube}", "--bind-address=127.0.0.1", "--leader-elect=false", *gates]
        # Nodes here have no kubelet: the node lifecycle controller would mark them unreachable and taint
        # them, which the planned nodes are not. The DaemonSet controller and the scheduler stay on.
        fast = ["--kube-api-qps=500", "--kube-api-burst=1000"]
        self._spawn("kube-controller-manager", *common, *fast, "--controllers=*,-node-lifecycle-controller",
                    "--use-service-account-credentials=false",
                    f"--root-ca-file={f / 'ca.crt'}", f"--service-account-private-key-file={f / 'sa.key'}",
                    f"--secure-port={ports.controller_manager}")
        self._spawn("kube-scheduler", *common, *fast, f"--secure-port={ports.scheduler}")
        return self

    def stop(self) -> None:
        for conn in self._opened:
            conn.close()
        self._opened.clear()
        for p in reversed(self.processes):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.processes:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.processes.clear()

    def _wait_ready(self, path: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            for p in self.processes:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args[0]} exited with {p.returncode}: see {self.folder}")
            try:
                self.request("GET", path)
                return
            except (ApiError, OSError) as exc:
                last = str(exc)
            time.sleep(0.3)
        raise TimeoutError(f"the API server was not ready after {timeout} s: {last}")

    # -- REST --------------------------------------------------------------------------------------
    def _context(self) -> ssl.SSLContext:
        """The admin's TLS context, made once (loading the chain per request costs more than the request)."""
        if self._tls is None:
            self._tls = ssl.create_default_context(cafile=str(self.folder / "ca.crt"))
            self._tls.load_cert_chain(str(self.folder / "admin.crt"), str(self.folder / "admin.key"))
        return self._tls

    def _connection(self) -> http.client.HTTPSConnection:
        """This thread's kept-alive TLS connection to the API server (a handshake per request costs more
        than most requests; a connection carries one request at a time, so threads do not share one)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            url = urllib.parse.urlsplit(self.server)
            conn = self._local.conn = http.client.HTTPSConnection(url.hostname or "127.0.0.1", url.port or 443,
                                                                  context=self._context(), timeout=60)
            self._opened.append(conn)
        return conn

    def _exchange(self, method: str, target: str, data: bytes | None, content_type: str) -> tuple[int, bytes]:
        """Send one request on the kept-alive connection; a connection the server closed while idle
        is opened again once (nothing was sent on it, so the request is not repeated): the server's close
        shows as a disconnect, a broken pipe, a reset, or TLS's end of stream on the next write."""
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, target, body=data, headers=headers)
                resp = conn.getresponse()
                return resp.status, resp.read()
            except Exception as exc:  # the connection's state is unknown: never reuse it
                conn.close()
                self._local.conn = None
                if attempt == 2 or not isinstance(exc, (http.client.RemoteDisconnected, BrokenPipeError,
                                                        ConnectionResetError, ssl.SSLEOFError)):
                    raise
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
                query: dict[str, str] | None = None) -> dict[str, Any]:
        target = path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        status, raw = self._exchange(method, target, data, content_type)
        if status >= 400:
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = {"message": raw.decode(errors="replace")}
            raise ApiError(status, str(problem.get("message", "")), problem)
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return {"text": raw.decode(errors="replace")}

    def discover(self) -> None:
        """(Re)read which kinds the server serves, and where."""
        kinds: dict[tuple[str, str], Resource] = {}

        def read(prefix: str, api_version: str) -> None:
            for r in self.request("GET", prefix).get("resources", []):
                if "/" not in r["name"]:
                    kinds[(api_version, r["kind"])] = Resource(prefix, r["name"], r["namespaced"])

        read("/api/v1", "v1")
        for group in self.request("GET", "/apis")["groups"]:
            for version in group["versions"]:
                read(f"/apis/{version['groupVersion']}", version["groupVersion"])
        self._kinds = kinds

    def served(self, api_version: str, kind: str) -> bool:
        if not self._kinds:
            self.discover()
        return (api_version, kind) in self._kinds

    def path(self, api_version: str, kind: str, name: str | None = None, namespace: str | None = None) -> str:
        if (api_version, kind) not in self._kinds:
            self.discover()
        try:
            res = self._kinds[(api_version, kind)]
        except KeyError:
            raise ApiError(404, f"the server does not serve {kind} in {api_version}") from None
        ns = f"/namespaces/{namespace or 'default'}" if res.namespaced else ""
        return f"{res.prefix}{ns}/{res.plural}" + (f"/{name}" if name else "")

    def apply(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """Server-side apply of one object (created or updated for real unless `dry_run`); the
        server's object back, or ApiError with the server's message."""
        meta = obj.get("metadata") or {}
        path = self.path(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        query = {"fieldManager": FIELD_MANAGER, "force": "true", "fieldValidation": "Strict"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("PATCH", path, obj, content_type="application/apply-patch+yaml", query=query)

    def apply_all(self, objs: Iterable[dict[str, Any]]) -> dict[str, str]:
        """Apply each object; the refusals by `<kind>/<namespace>/<name>`, with the server's message."""
        refused: dict[str, str] = {}
        for obj in objs:
            meta = obj.get("metadata") or {}
            try:
                self.apply(obj)
            except ApiError as exc:
                refused[f"{obj.get('kind')}/{meta.get('namespace', '')}/{meta.get('name')}"] = exc.message
        return refused

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        return self.request("GET", self.path(api_version, kind, name, namespace))

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             selector: str | None = None) -> list[dict[str, Any]]:
        query = {"labelSelector": selector} if selector else None
        return self.request("GET", self.path(api_version, kind, None, namespace), query=query).get("items", [])

    def list_all(self, api_version: str, kind: str, selector: str | None = None) -> list[dict[str, Any]]:
        """Objects of a namespaced kind across every namespace."""
        self.path(api_version, kind)  # discovers the kind
        res = self._kinds[(api_version, kind)]
        query = {"labelSelector": selector} if selector else None
        return self.request("GET", f"{res.prefix}/{res.plural}", query=query).get("items", [])

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        try:
            self.request("DELETE", self.path(api_version, kind, name, namespace))
        except ApiError as exc:
            if exc.status != 404:
                raise

    def add_node(self, name: str, labels: dict[str, str], taints: Sequence[dict[str, str]] = ()) -> None:
        """A Node as a kubelet would register it (labels, taints), then Ready with room for pods: the
        status a kubelet would report, so the scheduler has only the labels and taints to go by."""
        self.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": name, "labels": {"kubernetes.io/hostname": name, **labels}}, "spec": {"taints": list(taints)}})
        room = {"cpu": "192", "memory": "2Ti", "pods": "250"}
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.request("PATCH", f"/api/v1/nodes/{name}/status", {"status": {
            "capacity": room, "allocatable": room, "conditions": [{
                "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "e2e",
                "lastHeartbeatTime": now, "lastTransitionTime": now}]}},
            content_type="application/merge-patch+json")
        # The TaintNodesByCondition admission plugin taints every new node not-ready; the node lifecycle
        # controller (off here) lifts it once the node is Ready. Lift it as that controller would.
        self.request("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": list(taints) or None}},
                     content_type="application/merge-patch+json")

    def install_crds(self, documents: Iterable[dict[str, Any]], timeout: float = 60) -> None:
        """Apply CRDs and wait until each is Established and served."""
        docs = list(documents)
        for doc in docs:
            self.apply(doc)
        for doc in docs:
            name = doc["metadata"]["name"]
            self.wait_for(lambda n=name: self._established(n), timeout, f"CRD {name} established")
        self.discover()

    def _established(self, name: str) -> bool:
        """Whether the CRD is Established; right after creation the server may report `conditions: null`."""
        crd = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name) or {}
        conditions = (crd.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    @staticmethod
    def wait_for(predicate: Callable[[], bool], timeout: float = 60, what: str = "condition",
                 interval: float = 0.25) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(interval)
        raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


def start(feature_gates: str = "", emulated: str = "", slot: int = 0) -> ControlPlane:
    """Isolate the network, then start a control plane in a fresh temporary folder, on `slot`'s ports,
    emulating the Kubernetes minor `emulated` (empty: the binaries' own)."""
    bin_dir = engines_bin()
    isolate_network()
    folder = Path(tempfile.mkdtemp(prefix=f"eks-devices-e2e-{emulated or 'own'}-"))
    plane = ControlPlane(bin_dir, folder, feature_gates, emulated, Ports(slot))
    try:
        return plane.start()
    except BaseException:
        plane.stop()
        raise


def reaches_outside(host: str = "192.0.2.1", port: int = 443) -> bool:
    """Whether a TCP connect to a non-loopback address gets anywhere (TEST-NET-1: never routed)."""
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False

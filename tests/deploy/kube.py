"""Render the Helm chart with Helm's Go SDK (helm-python-sdk) and check the manifests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import helm_python as helm
import kubernetes_validate
import yaml
from pydantic import BaseModel

from memoryd.config import Settings

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "memoryd"
#: The newest Kubernetes schema set kubernetes-validate ships (and the chart's target).
KUBE_VERSION = "1.37.0"
RELEASE = "rel"
NAMESPACE = "agents"
#: Custom resources: no schema in kubernetes-validate (checked field by field instead).
CRD_GROUPS = ("monitoring.coreos.com/",)


@dataclass(frozen=True)
class Manifest:
    template: str
    doc: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.doc["kind"])

    @property
    def name(self) -> str:
        return str(self.doc["metadata"]["name"])


def render_chart(
    values: Mapping[str, Any] | None = None, chart_dir: Path = CHART, release: str = RELEASE
) -> list[Manifest]:
    """Every rendered Kubernetes object (NOTES.txt and empty templates dropped)."""
    with helm.Chart.load(chart_dir) as chart:
        rendered = chart.render(dict(values or {}), name=release, namespace=NAMESPACE)
    manifests = []
    for template, text in sorted(rendered.items()):
        if template.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                manifests.append(Manifest(template, doc))
    return manifests


def render_notes(values: Mapping[str, Any] | None = None) -> str:
    with helm.Chart.load(CHART) as chart:
        rendered = chart.render(dict(values or {}), name=RELEASE, namespace=NAMESPACE)
    return next(text for name, text in rendered.items() if name.endswith("NOTES.txt"))


def kinds(manifests: list[Manifest]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for m in manifests:
        out.setdefault(m.kind, []).append(m.doc)
    return out


def one(manifests: list[Manifest], kind: str) -> dict[str, Any]:
    found = kinds(manifests).get(kind, [])
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


def schema_errors(doc: dict[str, Any]) -> str | None:
    """None when ``doc`` is valid for Kubernetes KUBE_VERSION (strict: no unknown fields)."""
    try:
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        caught = exc.caught
        path = "/".join(str(p) for p in caught.absolute_path)
        return f"{doc['kind']}/{doc['metadata'].get('name')}: {caught.message} at /{path}"
    return None


def is_custom_resource(doc: dict[str, Any]) -> bool:
    return str(doc["apiVersion"]).startswith(CRD_GROUPS)


def pod_specs(manifests: list[Manifest]) -> Iterator[dict[str, Any]]:
    for m in manifests:
        if m.kind in {"Deployment", "StatefulSet", "DaemonSet", "Job"}:
            yield m.doc["spec"]["template"]["spec"]


def all_containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod.get("containers", [])]


def container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in all_containers(pod) if c["name"] == name)


def config_of(manifests: list[Manifest]) -> dict[str, Any]:
    """memoryd's config.yaml from the rendered ConfigMap."""
    cm = one(manifests, "ConfigMap")
    loaded: dict[str, Any] = yaml.safe_load(cm["data"]["config.yaml"])
    return loaded


# ------------------------------------------------------------ the daemon's setting names

#: Settings the chart writes before the daemon has them (another change adds them).
#: A path here is tolerated only while its *parent* is absent from memoryd.config.Settings;
#: once the section exists, every name the chart writes under it must match.
PENDING = ("metrics", "storage.qdrant")


def _lookup(path: str) -> tuple[bool, type[BaseModel] | None]:
    """(does the dotted setting exist, its nested model or None for a plain value)."""
    model: type[BaseModel] | None = Settings
    for part in path.split("."):
        if model is None:
            return True, None  # inside a free-form value (a dict or list): not checked
        field = model.model_fields.get(part)
        if field is None:
            return False, None
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
        else:
            model = None
    return True, model


def setting_exists(path: str) -> bool:
    return _lookup(path)[0]


def unknown_settings(config: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths in ``config`` that name no field of memoryd's Settings."""
    unknown = []
    for key, value in config.items():
        path = f"{prefix}{key}"
        exists, model = _lookup(path)
        if not exists:
            unknown.append(path)
        elif model is not None and isinstance(value, Mapping):
            unknown.extend(unknown_settings(value, f"{path}."))
    return unknown


def pending_ok(path: str) -> bool:
    """A pending setting whose section the daemon does not have yet."""
    for pending in PENDING:
        if path == pending or path.startswith(pending + "."):
            return not setting_exists(pending)
    return False


def without(config: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """A copy of ``config`` without the dotted ``paths``."""
    out: dict[str, Any] = yaml.safe_load(yaml.safe_dump(config))
    for path in paths:
        *parents, last = path.split(".")
        node = out
        for p in parents:
            node = node[p]
        node.pop(last, None)
    return out


def storage_backend_known(backend: str) -> bool:
    storage = Settings.model_fields["storage"].annotation
    assert isinstance(storage, type) and issubclass(storage, BaseModel)
    return backend in get_args(storage.model_fields["backend"].annotation)


def env_setting_path(env_name: str) -> str:
    """MEMORYD_STORAGE__QDRANT__API_KEY -> storage.qdrant.api_key"""
    assert env_name.startswith("MEMORYD_"), env_name
    return ".".join(env_name.removeprefix("MEMORYD_").lower().split("__"))


def load_settings(config: dict[str, Any], tmp: Path) -> Settings:
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return Settings.load(path)

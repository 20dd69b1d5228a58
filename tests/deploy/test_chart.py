"""The Helm chart, rendered and linted by Helm's own Go SDK (helm-python-sdk, no binary)
and validated against the Kubernetes 1.37 schemas (kubernetes-validate, strict)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.deploy.kube import (
    CHART,
    NAMESPACE,
    RELEASE,
    all_containers,
    config_of,
    container,
    env_setting_path,
    is_custom_resource,
    kinds,
    load_settings,
    one,
    pending_ok,
    pod_specs,
    render_chart,
    render_notes,
    schema_errors,
    setting_exists,
    storage_backend_known,
    unknown_settings,
    without,
)

QDRANT_EXTERNAL = {
    "storage": {
        "backend": "qdrant",
        "qdrant": {
            "url": "http://qdrant.vectors.svc:6333",
            "apiKeySecret": {"name": "qdrant-key", "key": "api-key"},
        },
    },
    "replicaCount": 3,
}
TLS = {"enabled": True, "existingSecret": "memoryd-tls"}

#: name -> values; every one is rendered, linted and schema-checked.
VALUE_SETS: dict[str, dict[str, Any]] = {
    "cluster-defaults": {},
    "cluster-embedded-no-persistence": {"persistence": {"enabled": False}},
    "cluster-qdrant": QDRANT_EXTERNAL,
    "cluster-qdrant-hpa-monitor": {
        **QDRANT_EXTERNAL,
        "autoscaling": {"enabled": True, "targetMemoryUtilizationPercentage": 80},
        "metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}},
        "networkPolicy": {
            "allowedClients": [{"namespaceSelector": {"matchLabels": {"team": "agents"}}}],
            "metricsFrom": [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}],
        },
    },
    "cluster-qdrant-distributed": {
        **QDRANT_EXTERNAL,
        "storage": {
            "backend": "qdrant",
            "qdrant": {
                "url": "http://qdrant.vectors.svc:6333",
                "shardNumber": 6,
                "replicationFactor": 2,
                "writeConsistencyFactor": 1,
                "writeOrdering": "medium",
            },
        },
        "pageTokens": {"existingSecret": "memoryd-page-key", "key": "hmac"},
        "autoscaling": {"enabled": True},
    },
    # The qdrant/qdrant dependency cannot be fetched here, so only memoryd's side renders.
    "cluster-qdrant-bundled": {
        "storage": {"backend": "qdrant", "qdrant": {"apiKeySecret": {"name": "qdrant-key"}}},
        "qdrant": {"enabled": True},
    },
    "cluster-api-key-created-tls": {
        "auth": {
            "mode": "api_key",
            "apiKeys": {
                "create": True,
                "content": "- name: ci\n  tenant_id: acme\n  sha256: " + "ab" * 32 + "\n",
            },
            "tls": TLS,
        }
    },
    "cluster-mtls": {
        "auth": {
            "mode": "mtls",
            "tls": {**TLS, "probeClientSecret": "memoryd-probe-client"},
            "mtlsSubjects": [
                {"subject": "agent.acme.example", "name": "acme-agent", "tenant_id": "acme"}
            ],
        }
    },
    "cluster-openai": {
        "embedder": "openai",
        "embedding": {
            "openai": {
                "url": "http://tei.models.svc/v1",
                "dimension": 768,
                "apiKeySecret": {"name": "embeddings", "key": "token"},
            }
        },
        "config": {"limits": {"max_content_bytes": 16384}},
    },
    "sidecar": {"mode": "sidecar"},
    "sidecar-claim": {
        "mode": "sidecar",
        "sidecar": {"persistence": {"existingClaim": "agent-memory"}},
        "principal": {"tenantId": "acme", "agents": ["planner"], "clearance": "INTERNAL"},
    },
}
CLUSTER_SETS = [name for name in VALUE_SETS if name.startswith("cluster")]


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[Any]]:
    return {name: render_chart(values) for name, values in VALUE_SETS.items()}


# ------------------------------------------------------------------ lint and schemas


@pytest.mark.parametrize("name", VALUE_SETS)
def test_helm_lint_passes(name: str) -> None:
    report = helm.lint(CHART, VALUE_SETS[name], namespace=NAMESPACE, kube_version="v1.37.0")
    assert report["errors"] == [], report["messages"]
    warnings = [m["error"] for m in report["messages"] if m["severity"] >= 2]
    # The only warning: the optional Qdrant chart is declared but not fetched (no network).
    assert warnings == ["chart directory is missing these dependencies: qdrant"]


@pytest.mark.parametrize("name", VALUE_SETS)
def test_every_manifest_is_valid_kubernetes(name: str, rendered: dict[str, list[Any]]) -> None:
    manifests = rendered[name]
    assert manifests
    errors = [schema_errors(m.doc) for m in manifests if not is_custom_resource(m.doc)]
    assert [e for e in errors if e] == []
    for m in manifests:
        assert m.doc["metadata"]["labels"]["app.kubernetes.io/instance"] == RELEASE


def test_service_monitor_shape(rendered: dict[str, list[Any]]) -> None:
    """The one custom resource (no schema in kubernetes-validate): checked by hand."""
    manifests = rendered["cluster-qdrant-hpa-monitor"]
    monitor = one(manifests, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prom"
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint == {
        "port": "metrics",
        "path": "/metrics",
        "interval": "30s",
        "scrapeTimeout": "10s",
    }
    service = next(s for s in kinds(manifests)["Service"] if "clusterIP" not in s["spec"])
    assert "metrics" in {p["name"] for p in service["spec"]["ports"]}
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    for name in VALUE_SETS:
        if name != "cluster-qdrant-hpa-monitor":
            assert "ServiceMonitor" not in kinds(rendered[name]), name


# ------------------------------------------------------------------ modes and workloads


def test_sidecar_mode_renders_only_the_config(rendered: dict[str, list[Any]]) -> None:
    for name in ("sidecar", "sidecar-claim"):
        assert sorted(kinds(rendered[name])) == ["ConfigMap"], name
        assert config_of(rendered[name])["listen"] == "unix:/run/memoryd/memoryd.sock"
        assert "auth" not in config_of(rendered[name])  # sidecar auth: the daemon's default
    assert config_of(rendered["sidecar-claim"])["sidecar"] == {
        "tenant_id": "acme",
        "agents": ["planner"],
        "clearance": "INTERNAL",
    }


def test_embedded_store_is_a_single_statefulset(rendered: dict[str, list[Any]]) -> None:
    for name in ("cluster-defaults", "cluster-embedded-no-persistence"):
        by_kind = kinds(rendered[name])
        assert "Deployment" not in by_kind and "HorizontalPodAutoscaler" not in by_kind
        assert "PodDisruptionBudget" not in by_kind  # one pod: a budget would block drains
        sts = one(rendered[name], "StatefulSet")
        assert sts["spec"]["replicas"] == 1
        headless = [s for s in by_kind["Service"] if s["spec"].get("clusterIP") == "None"]
        assert [s["metadata"]["name"] for s in headless] == [sts["spec"]["serviceName"]]
    claims = one(rendered["cluster-defaults"], "StatefulSet")["spec"]["volumeClaimTemplates"]
    assert [c["metadata"]["name"] for c in claims] == ["memoryd-data"]
    assert claims[0]["spec"]["resources"]["requests"]["storage"] == "10Gi"
    ephemeral = one(rendered["cluster-embedded-no-persistence"], "StatefulSet")["spec"]
    assert "volumeClaimTemplates" not in ephemeral
    volumes = {v["name"]: v for v in ephemeral["template"]["spec"]["volumes"]}
    assert "emptyDir" in volumes["memoryd-data"]


def test_qdrant_backend_scales_out(rendered: dict[str, list[Any]]) -> None:
    fixed = kinds(rendered["cluster-qdrant"])
    assert "StatefulSet" not in fixed and "HorizontalPodAutoscaler" not in fixed
    assert one(rendered["cluster-qdrant"], "Deployment")["spec"]["replicas"] == 3
    assert one(rendered["cluster-qdrant"], "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1

    scaled = rendered["cluster-qdrant-hpa-monitor"]
    deployment = one(scaled, "Deployment")
    assert "replicas" not in deployment["spec"]  # the HPA owns it
    hpa = one(scaled, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": deployment["metadata"]["name"],
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 6)
    assert {m["resource"]["name"] for m in hpa["spec"]["metrics"]} == {"cpu", "memory"}
    assert one(scaled, "PodDisruptionBudget")

    config = config_of(rendered["cluster-qdrant"])
    assert config["storage"] == {
        "backend": "qdrant",
        "qdrant": {
            "url": "http://qdrant.vectors.svc:6333",
            "shared": True,
            "write_ordering": "strong",
        },
    }
    env = container(
        one(rendered["cluster-qdrant"], "Deployment")["spec"]["template"]["spec"], "memoryd"
    )["env"]
    (key_env,) = [e for e in env if "QDRANT" in e["name"]]
    assert key_env["valueFrom"]["secretKeyRef"] == {"name": "qdrant-key", "key": "api-key"}


REPLICATED_SETS = [
    "cluster-qdrant",
    "cluster-qdrant-hpa-monitor",
    "cluster-qdrant-distributed",
    "cluster-qdrant-bundled",
]


@pytest.mark.parametrize("name", REPLICATED_SETS)
def test_replicated_layout_keeps_nothing_acknowledged_on_a_pod(
    name: str, rendered: dict[str, list[Any]]
) -> None:
    """The rule in cluster mode on Qdrant: a write is acknowledged once Qdrant has
    applied it. So the replicas share the store (conditional writes, no per-replica
    log), the pods are a Deployment whose data dir is an emptyDir holding nothing
    acknowledged, and every replica signs page tokens with one key from a Secret."""
    manifests = rendered[name]
    by_kind = kinds(manifests)
    assert "StatefulSet" not in by_kind
    deployment = one(manifests, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    config = config_of(manifests)
    assert config["storage"]["qdrant"]["shared"] is True  # no local write-ahead log
    assert "durability" not in config  # nothing re-enables a log on the emptyDir
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["memoryd-data"]
    assert not any("persistentVolumeClaim" in v for v in volumes.values())
    (secret_env,) = [e for e in container(pod, "memoryd")["env"] if "PAGE_TOKEN" in e["name"]]
    assert secret_env["name"] == "MEMORYD_PAGE_TOKEN_SECRET"
    ref = secret_env["valueFrom"]["secretKeyRef"]
    secrets = {s["metadata"]["name"]: s for s in by_kind.get("Secret", [])}
    existing = VALUE_SETS[name].get("pageTokens", {}).get("existingSecret")
    if existing:
        assert ref == {"name": existing, "key": VALUE_SETS[name]["pageTokens"]["key"]}
        assert existing not in secrets
    else:
        created = secrets[ref["name"]]
        assert ref["key"] in created["data"]
        assert created["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    if VALUE_SETS[name].get("autoscaling", {}).get("enabled"):
        hpa = one(manifests, "HorizontalPodAutoscaler")
        assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert one(manifests, "PodDisruptionBudget")


def test_embedded_store_keeps_its_writes_on_a_claim(rendered: dict[str, list[Any]]) -> None:
    """The other layout: the embedded store acknowledges a write once it is in the
    log on the StatefulSet's claim; no page-token Secret (one replica)."""
    manifests = rendered["cluster-defaults"]
    sts = one(manifests, "StatefulSet")
    assert [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]] == ["memoryd-data"]
    volumes = {v["name"] for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert "memoryd-data" not in volumes  # the claim, not an emptyDir
    assert "shared" not in config_of(manifests)["storage"].get("qdrant", {})
    env = container(sts["spec"]["template"]["spec"], "memoryd")["env"]
    assert not [e for e in env if "PAGE_TOKEN" in e["name"]]


def test_distributed_collection_settings_reach_the_daemon(
    rendered: dict[str, list[Any]],
) -> None:
    qdrant = config_of(rendered["cluster-qdrant-distributed"])["storage"]["qdrant"]
    assert qdrant == {
        "url": "http://qdrant.vectors.svc:6333",
        "shared": True,
        "write_ordering": "medium",
        "shard_number": 6,
        "replication_factor": 2,
        "write_consistency_factor": 1,
    }


def test_write_consistency_above_replication_is_refused() -> None:
    values = {
        **QDRANT_EXTERNAL,
        "storage": {
            "backend": "qdrant",
            "qdrant": {"url": "http://q:6333", "replicationFactor": 2, "writeConsistencyFactor": 3},
        },
    }
    with pytest.raises(Exception, match="writeConsistencyFactor cannot exceed"):
        render_chart(values)


def test_bundled_qdrant_is_the_dependency_service(rendered: dict[str, list[Any]]) -> None:
    config = config_of(rendered["cluster-qdrant-bundled"])
    assert config["storage"]["qdrant"]["url"] == f"http://{RELEASE}-qdrant:6333"
    values = {
        **VALUE_SETS["cluster-qdrant-bundled"],
        "qdrant": {"enabled": True, "fullnameOverride": "vectors"},
    }
    assert config_of(render_chart(values))["storage"]["qdrant"]["url"] == "http://vectors:6333"
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    (dep,) = chart["dependencies"]
    assert (dep["name"], dep["condition"]) == ("qdrant", "qdrant.enabled")
    assert dep["repository"].startswith("https://")


def test_network_policy_guards_the_grpc_port(rendered: dict[str, list[Any]]) -> None:
    default = one(rendered["cluster-defaults"], "NetworkPolicy")["spec"]
    grpc_rule, metrics_rule = default["ingress"]
    assert grpc_rule["ports"] == [{"port": "grpc", "protocol": "TCP"}]
    assert grpc_rule["from"] == [
        {"podSelector": {"matchLabels": {"memoryd-client": f"{RELEASE}-memoryd"}}}
    ]
    assert "from" not in metrics_rule
    custom = one(rendered["cluster-qdrant-hpa-monitor"], "NetworkPolicy")["spec"]
    assert custom["ingress"][0]["from"] == [
        {"namespaceSelector": {"matchLabels": {"team": "agents"}}}
    ]
    assert custom["ingress"][1]["from"][0]["namespaceSelector"]["matchLabels"] == {
        "name": "monitoring"
    }


# ------------------------------------------------------------------ pods: probes, security, secrets


@pytest.mark.parametrize("name", CLUSTER_SETS)
def test_pods_run_as_non_root(name: str, rendered: dict[str, list[Any]]) -> None:
    pods = list(pod_specs(rendered[name]))
    assert len(pods) == 1
    pod = pods[0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["automountServiceAccountToken"] is False
    for c in all_containers(pod):
        sc = c["securityContext"]
        assert sc["runAsNonRoot"] is True and sc["runAsUser"] != 0
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["capabilities"]["drop"] == ["ALL"]
        assert c["args"] == ["serve", "--config", "/etc/memoryd/config/config.yaml"]


@pytest.mark.parametrize("name", ["cluster-defaults", "cluster-qdrant", "cluster-openai"])
def test_plaintext_cluster_uses_kubelet_grpc_probes(
    name: str, rendered: dict[str, list[Any]]
) -> None:
    (pod,) = pod_specs(rendered[name])
    memoryd = container(pod, "memoryd")
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert memoryd[probe]["grpc"] == {"port": 50051}, probe
    assert {p["name"]: p["containerPort"] for p in memoryd["ports"]} == {
        "grpc": 50051,
        "metrics": 9464,
    }


def test_tls_probes_speak_grpc_health_over_tls(rendered: dict[str, list[Any]]) -> None:
    """The kubelet's grpc probe has no TLS: with TLS the probe execs memoryd-healthcheck."""
    (pod,) = pod_specs(rendered["cluster-api-key-created-tls"])
    command = container(pod, "memoryd")["livenessProbe"]["exec"]["command"]
    assert command[0] == "memoryd-healthcheck"
    assert _flag(command, "--address") == "127.0.0.1:50051"
    assert _flag(command, "--tls-ca") == "/etc/memoryd/tls/ca.crt"
    assert _flag(command, "--server-name") == f"{RELEASE}-memoryd.{NAMESPACE}.svc"
    assert "--tls-cert" not in command

    (pod,) = pod_specs(rendered["cluster-mtls"])
    command = container(pod, "memoryd")["readinessProbe"]["exec"]["command"]
    assert _flag(command, "--tls-cert") == "/etc/memoryd/probe-tls/tls.crt"
    assert _flag(command, "--tls-key") == "/etc/memoryd/probe-tls/tls.key"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["probe-tls"]["secret"]["secretName"] == "memoryd-probe-client"


def test_api_keys_come_from_a_secret(rendered: dict[str, list[Any]]) -> None:
    for name, secret_name in (
        ("cluster-defaults", f"{RELEASE}-memoryd-api-keys"),
        ("cluster-api-key-created-tls", f"{RELEASE}-memoryd-api-keys"),
    ):
        (pod,) = pod_specs(rendered[name])
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["api-keys"]["secret"]["secretName"] == secret_name
        mounts = {m["name"]: m for m in container(pod, "memoryd")["volumeMounts"]}
        # A directory mount, not subPath: kubelet then updates a rotated Secret in place.
        assert mounts["api-keys"] == {
            "name": "api-keys",
            "mountPath": "/etc/memoryd/auth",
            "readOnly": True,
        }
        auth = config_of(rendered[name])["auth"]
        assert auth["mode"] == "api_key"
        assert auth["keys_file"] == "/etc/memoryd/auth/keys.yaml"
    assert "Secret" not in kinds(rendered["cluster-defaults"])  # an existing Secret is expected
    created = one(rendered["cluster-api-key-created-tls"], "Secret")
    assert created["metadata"]["name"] == f"{RELEASE}-memoryd-api-keys"
    assert yaml.safe_load(created["stringData"]["keys.yaml"])[0]["tenant_id"] == "acme"
    (pod_template,) = [
        d["spec"]["template"] for d in kinds(rendered["cluster-api-key-created-tls"])["StatefulSet"]
    ]
    assert "checksum/api-keys" in pod_template["metadata"]["annotations"]


def test_tls_comes_from_a_secret(rendered: dict[str, list[Any]]) -> None:
    for name in ("cluster-api-key-created-tls", "cluster-mtls"):
        (pod,) = pod_specs(rendered[name])
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["tls"]["secret"]["secretName"] == "memoryd-tls"
        mounts = {m["name"]: m["mountPath"] for m in container(pod, "memoryd")["volumeMounts"]}
        assert mounts["tls"] == "/etc/memoryd/tls"
        tls = config_of(rendered[name])["auth"]["tls"]
        assert tls["cert_file"] == "/etc/memoryd/tls/tls.crt"
        assert tls["key_file"] == "/etc/memoryd/tls/tls.key"
    assert "client_ca_file" not in config_of(rendered["cluster-api-key-created-tls"])["auth"]["tls"]
    mtls = config_of(rendered["cluster-mtls"])["auth"]
    assert mtls["tls"]["client_ca_file"] == "/etc/memoryd/tls/ca.crt"
    assert mtls["mtls"]["subjects"][0]["subject"] == "agent.acme.example"
    assert "api-keys" not in {
        v["name"] for v in next(pod_specs(rendered["cluster-mtls"]))["volumes"]
    }
    service = next(
        s for s in kinds(rendered["cluster-mtls"])["Service"] if "clusterIP" not in s["spec"]
    )
    assert service["spec"]["ports"][0]["appProtocol"] == "grpc"


def test_config_change_rolls_the_pods() -> None:
    def checksum(values: dict[str, Any]) -> str:
        (pod_template,) = [
            d["spec"]["template"] for d in kinds(render_chart(values))["StatefulSet"]
        ]
        return str(pod_template["metadata"]["annotations"]["checksum/config"])

    assert checksum({}) == checksum({})
    assert checksum({}) != checksum({"logging": {"level": "debug"}})


def test_notes_tell_what_to_create() -> None:
    notes = render_notes({})
    assert f"create secret generic {RELEASE}-memoryd-api-keys" in notes
    assert "kill -HUP 1" in notes
    assert "unix:/run/memoryd/memoryd.sock" in render_notes({"mode": "sidecar"})
    mtls = render_notes(VALUE_SETS["cluster-mtls"])
    assert "memoryd-healthcheck --timeout 3 --address 127.0.0.1:50051 --tls-ca" in mtls
    assert "--tls-cert /etc/memoryd/probe-tls/tls.crt" in mtls


# ------------------------------------------------------------------ config matches the daemon


@pytest.mark.parametrize("name", VALUE_SETS)
def test_rendered_config_is_a_valid_daemon_config(
    name: str, rendered: dict[str, list[Any]], tmp_path: Path
) -> None:
    """config.yaml uses only setting names memoryd knows (pending sections aside) and
    passes memoryd's own validation (memoryd.config.Settings, extra=forbid)."""
    config = config_of(rendered[name])
    unknown = unknown_settings(config)
    assert [p for p in unknown if not pending_ok(p)] == []
    checked = without(config, unknown)
    if not storage_backend_known(checked["storage"]["backend"]):  # pending: the Qdrant backend
        checked["storage"]["backend"] = "lancedb"
    settings = load_settings(checked, tmp_path)
    assert str(settings.data_dir) == "/var/lib/memoryd"
    env = [e["name"] for pod in pod_specs(rendered[name]) for e in container(pod, "memoryd")["env"]]
    for var in env:
        if var.startswith("MEMORYD_"):
            path = env_setting_path(var)
            assert setting_exists(path) or pending_ok(path), var


def test_config_overrides_merge_last(rendered: dict[str, list[Any]]) -> None:
    config = config_of(rendered["cluster-openai"])
    assert config["limits"] == {"max_content_bytes": 16384}
    assert config["embedding"]["openai_dimension"] == 768


@pytest.mark.parametrize("path", ["metrics", "storage.qdrant"])
def test_pending_daemon_settings_have_landed(path: str) -> None:
    """The chart writes these; they fail above as soon as the daemon's names differ."""
    if not setting_exists(path):
        pytest.skip(f"memoryd.config has no `{path}` yet; the chart already renders it")
    assert setting_exists(path)


def test_pending_qdrant_backend_has_landed() -> None:
    if not storage_backend_known("qdrant"):
        pytest.skip("memoryd.config has no storage.backend `qdrant` yet; the chart renders it")
    assert storage_backend_known("qdrant")


# ------------------------------------------------------------------ values and docs


BAD_VALUES: dict[str, dict[str, Any]] = {
    "unknown mode": {"mode": "daemonset"},
    "replicaCount not an integer": {"replicaCount": "two"},
    "grpcPort not a port": {"grpcPort": 70000},
    "boolean as a string": {"metrics": {"enabled": "yes"}},
    "unknown top-level value": {"replicas": 3},
    "unknown nested value": {"auth": {"apiKey": {"existingSecret": "x"}}},
    "sidecar auth in cluster mode": {"auth": {"mode": "sidecar"}},
    "embedded store with replicas": {"replicaCount": 3},
    "embedded store with an HPA": {"autoscaling": {"enabled": True}},
    "mtls without TLS": {"auth": {"mode": "mtls"}},
    "TLS without its Secret": {"auth": {"tls": {"enabled": True}}},
    "qdrant without a URL": {"storage": {"backend": "qdrant"}},
    "openai without a dimension": {
        "embedder": "openai",
        "embedding": {"openai": {"url": "http://e/v1"}},
    },
    "unknown clearance": {"principal": {"clearance": "TOP_SECRET"}},
    "unknown embedder": {"embedder": "torch"},
}


@pytest.mark.parametrize("case", BAD_VALUES)
def test_schema_rejects_bad_values(case: str) -> None:
    values = BAD_VALUES[case]
    with helm.Chart.load(CHART) as chart:
        with pytest.raises(helm.HelmValuesError):
            chart.validate_schema(values)
        with pytest.raises(helm.HelmValuesError):  # install / template validate too
            chart.render(values, name=RELEASE, namespace=NAMESPACE)


@pytest.mark.parametrize("name", VALUE_SETS)
def test_schema_accepts_the_value_sets(name: str) -> None:
    with helm.Chart.load(CHART) as chart:
        chart.validate_schema(copy.deepcopy(VALUE_SETS[name]))


def test_image_tag_follows_the_app_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["image"]["tag"] == chart["appVersion"]


def _documented_paths(values: Any, schema: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted value paths down to where the schema stops describing structure (a
    free-form object such as resources or podSecurityContext counts as one value)."""
    props = schema.get("properties")
    if not isinstance(values, dict) or not props:
        return [prefix.rstrip(".")]
    return [
        p
        for key, value in values.items()
        for p in _documented_paths(value, props.get(key, {}), f"{prefix}{key}.")
    ]


def test_readme_lists_every_value() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    schema = json.loads((CHART / "values.schema.json").read_text())
    readme = (CHART / "README.md").read_text()
    paths = _documented_paths(values, schema)
    assert "podSecurityContext" in paths and "auth.tls.caKey" in paths
    missing = [p for p in paths if f"| `{p}` |" not in readme]
    assert missing == []


def _flag(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]

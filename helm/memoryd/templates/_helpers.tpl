{{/*
Names, labels, the image, and config.yaml.

Templates that the memoryd.sidecar.* helpers use (names, image, config, env, mounts) read
only .Values and .Release, never .Chart: a parent chart calls them with
(dict "Values" .Values.memoryd "Release" .Release), where .Chart is the parent's.
*/}}

{{- define "memoryd.name" -}}
{{- default "memoryd" .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "memoryd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "memoryd.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "<fullname>-<suffix>", the fullname cut so the result stays a 63-character DNS label. */}}
{{- define "memoryd.suffixed" -}}
{{- $ctx := index . 0 }}{{- $suffix := index . 1 }}
{{- $max := sub 62 (len $suffix) | int }}
{{- printf "%s-%s" (include "memoryd.fullname" $ctx | trunc $max | trimSuffix "-") $suffix }}
{{- end }}

{{- define "memoryd.configMapName" -}}
{{- include "memoryd.suffixed" (list . "config") }}
{{- end }}

{{- define "memoryd.pageTokensSecretName" -}}
{{- default (include "memoryd.suffixed" (list . "page-tokens")) .Values.pageTokens.existingSecret }}
{{- end }}

{{/* Cluster mode on Qdrant: several stateless replicas over one shared store. */}}
{{- define "memoryd.replicated" -}}
{{- if and (eq .Values.mode "cluster") (eq .Values.storage.backend "qdrant") }}true{{- end }}
{{- end }}

{{- define "memoryd.apiKeysSecretName" -}}
{{- default (include "memoryd.suffixed" (list . "api-keys")) .Values.auth.apiKeys.existingSecret }}
{{- end }}

{{- define "memoryd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "memoryd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "memoryd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "memoryd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "memoryd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "memoryd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | quote }}
app.kubernetes.io/component: {{ .Values.mode }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "memoryd.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}
{{- end }}

{{/* Paths inside the container. */}}
{{- define "memoryd.configPath" -}}/etc/memoryd/config/config.yaml{{- end }}
{{- define "memoryd.authDir" -}}/etc/memoryd/auth{{- end }}
{{- define "memoryd.tlsDir" -}}/etc/memoryd/tls{{- end }}
{{- define "memoryd.probeTlsDir" -}}/etc/memoryd/probe-tls{{- end }}

{{/* The Qdrant URL: the external one, else the bundled chart's Service. */}}
{{- define "memoryd.qdrantUrl" -}}
{{- if .Values.storage.qdrant.url }}
{{- .Values.storage.qdrant.url }}
{{- else if .Values.qdrant.enabled }}
{{- /* The qdrant chart's own fullname rule. */}}
{{- $name := default "qdrant" .Values.qdrant.nameOverride }}
{{- $full := ternary .Release.Name (printf "%s-%s" .Release.Name $name) (contains $name .Release.Name) }}
{{- printf "http://%s:6333" (default $full .Values.qdrant.fullnameOverride | trunc 63 | trimSuffix "-") }}
{{- end }}
{{- end }}

{{/*
config.yaml. Every daemon setting name the chart writes is in this one template
(and in memoryd.secretEnv below): when server/memoryd/config.py renames one, change it here.
.Values.config is merged over the result last.
*/}}
{{- define "memoryd.config" -}}
{{- $v := .Values }}
{{- $c := dict "data_dir" $v.dataDir "shutdown_grace_s" $v.shutdownGraceSeconds }}
{{- /* Unset: the daemon's default (e5), and a volume embedded by another model keeps it. */}}
{{- if $v.embedder }}
{{- $_ := set $c "embedder" $v.embedder }}
{{- end }}
{{- $_ := set $c "logging" (dict "level" $v.logging.level "format" $v.logging.format) }}
{{- $_ := set $c "sidecar" (dict "tenant_id" $v.principal.tenantId "agents" $v.principal.agents "clearance" $v.principal.clearance) }}
{{- $embedding := dict "local_threads" $v.embedding.localThreads "models_dir" $v.embedding.modelsDir }}
{{- if eq $v.embedder "openai" }}
{{- $_ := set $embedding "openai_url" $v.embedding.openai.url }}
{{- $_ := set $embedding "openai_model" $v.embedding.openai.model }}
{{- $_ := set $embedding "openai_dimension" $v.embedding.openai.dimension }}
{{- end }}
{{- $_ := set $c "embedding" $embedding }}
{{- $storage := dict "backend" $v.storage.backend }}
{{- if eq $v.storage.backend "qdrant" }}
{{- /* Acknowledged = applied in Qdrant: replicas keep no write on their emptyDir. */}}
{{- $q := dict "url" (include "memoryd.qdrantUrl" .) "shared" true "write_ordering" $v.storage.qdrant.writeOrdering }}
{{- with $v.storage.qdrant.shardNumber }}{{- $_ := set $q "shard_number" . }}{{- end }}
{{- with $v.storage.qdrant.replicationFactor }}{{- $_ := set $q "replication_factor" . }}{{- end }}
{{- with $v.storage.qdrant.writeConsistencyFactor }}{{- $_ := set $q "write_consistency_factor" . }}{{- end }}
{{- $_ := set $storage "qdrant" $q }}
{{- end }}
{{- $_ := set $c "storage" $storage }}
{{- if $v.metrics.enabled }}
{{- $_ := set $c "metrics" (dict "enabled" true "listen" (printf "0.0.0.0:%d" ($v.metrics.port | int))) }}
{{- end }}
{{- if eq $v.mode "sidecar" }}
{{- $_ := set $c "listen" (printf "unix:%s" (include "memoryd.sidecar.socketPath" .)) }}
{{- if not $v.sidecar.memoryRoot.enabled }}
{{- $_ := set $c "keys" (dict "mirror" false) }}
{{- end }}
{{- else }}
{{- $_ := set $c "listen" (printf "0.0.0.0:%d" ($v.grpcPort | int)) }}
{{- $auth := dict "mode" $v.auth.mode }}
{{- if eq $v.auth.mode "api_key" }}
{{- $_ := set $auth "keys_file" (printf "%s/%s" (include "memoryd.authDir" .) $v.auth.apiKeys.key) }}
{{- end }}
{{- if eq $v.auth.mode "mtls" }}
{{- $_ := set $auth "mtls" (dict "subjects" $v.auth.mtlsSubjects) }}
{{- end }}
{{- if $v.auth.tls.enabled }}
{{- $tlsDir := include "memoryd.tlsDir" . }}
{{- $tls := dict "cert_file" (printf "%s/%s" $tlsDir $v.auth.tls.certKey) "key_file" (printf "%s/%s" $tlsDir $v.auth.tls.keyKey) }}
{{- if eq $v.auth.mode "mtls" }}
{{- $_ := set $tls "client_ca_file" (printf "%s/%s" $tlsDir $v.auth.tls.caKey) }}
{{- end }}
{{- $_ := set $auth "tls" $tls }}
{{- end }}
{{- $_ := set $c "auth" $auth }}
{{- end }}
{{- toYaml (mustMergeOverwrite $c (deepCopy $v.config)) }}
{{- end }}

{{/* Secrets handed to the daemon as MEMORYD_* environment variables. */}}
{{- define "memoryd.secretEnv" -}}
{{- $v := .Values }}
{{- if and (eq $v.storage.backend "qdrant") $v.storage.qdrant.apiKeySecret.name }}
- name: MEMORYD_STORAGE__QDRANT__API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $v.storage.qdrant.apiKeySecret.name }}
      key: {{ $v.storage.qdrant.apiKeySecret.key }}
{{- end }}
{{- if include "memoryd.replicated" . }}
- name: MEMORYD_PAGE_TOKEN_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "memoryd.pageTokensSecretName" . }}
      key: {{ $v.pageTokens.key }}
{{- end }}
{{- if and (eq $v.embedder "openai") $v.embedding.openai.apiKeySecret.name }}
- name: MEMORYD_EMBEDDING__OPENAI_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $v.embedding.openai.apiKeySecret.name }}
      key: {{ $v.embedding.openai.apiKeySecret.key }}
{{- end }}
{{- end }}

{{/* Checks the schema cannot express (or that must hold with --skip-schema-validation). */}}
{{- define "memoryd.validate" -}}
{{- $v := .Values }}
{{- if not (has $v.mode (list "cluster" "sidecar")) }}
{{- fail (printf "mode must be cluster or sidecar, not %q" $v.mode) }}
{{- end }}
{{- if eq $v.mode "cluster" }}
{{- if eq $v.auth.mode "sidecar" }}
{{- fail "auth.mode sidecar trusts every caller of the listener: in cluster mode use api_key or mtls" }}
{{- end }}
{{- if and (eq $v.storage.backend "lancedb") (or (gt ($v.replicaCount | int) 1) $v.autoscaling.enabled) }}
{{- fail "storage.backend lancedb (embedded) has one writer per volume: replicaCount must be 1 and autoscaling off; use storage.backend qdrant to scale out" }}
{{- end }}
{{- if and (eq $v.auth.mode "mtls") (not $v.auth.tls.enabled) }}
{{- fail "auth.mode mtls needs auth.tls.enabled and auth.tls.existingSecret" }}
{{- end }}
{{- if and $v.auth.tls.enabled (not $v.auth.tls.existingSecret) }}
{{- fail "auth.tls.enabled needs auth.tls.existingSecret (a kubernetes.io/tls Secret)" }}
{{- end }}
{{- if and $v.auth.apiKeys.create (not $v.auth.apiKeys.content) }}
{{- fail "auth.apiKeys.create needs auth.apiKeys.content (the keys file, SHA-256 hashes only)" }}
{{- end }}
{{- end }}
{{- with $v.storage.qdrant }}
{{- if and .writeConsistencyFactor (gt (int .writeConsistencyFactor) (int (default 1 .replicationFactor))) }}
{{- fail "storage.qdrant.writeConsistencyFactor cannot exceed replicationFactor: no write could succeed" }}
{{- end }}
{{- end }}
{{- if and (eq $v.storage.backend "qdrant") (not (include "memoryd.qdrantUrl" .)) }}
{{- fail "storage.backend qdrant needs storage.qdrant.url or qdrant.enabled=true" }}
{{- end }}
{{- if and (eq $v.embedder "openai") (or (not $v.embedding.openai.url) (not $v.embedding.openai.dimension)) }}
{{- fail "embedder openai needs embedding.openai.url and embedding.openai.dimension" }}
{{- end }}
{{- end }}

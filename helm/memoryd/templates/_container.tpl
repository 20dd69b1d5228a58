{{/*
Pieces of the memoryd container shared by both modes: probes, mounts and env.
*/}}

{{/*
The probe action. Cluster mode without TLS: the kubelet's own grpc probe (grpc.health.v1
on the pod IP). Otherwise an exec of memoryd-healthcheck (grpc.health.v1 too), because the
kubelet's grpc probe reaches only a plaintext TCP port on the pod IP: it cannot use the
sidecar's Unix socket, and it does not speak TLS.
*/}}
{{- define "memoryd.probeAction" -}}
{{- $v := .Values }}
{{- if eq $v.mode "sidecar" }}
exec:
  command: ["memoryd-healthcheck", "--timeout", "3", "--address", {{ printf "unix:%s" (include "memoryd.sidecar.socketPath" .) | quote }}]
{{- else if not $v.auth.tls.enabled }}
grpc:
  port: {{ $v.grpcPort | int }}
{{- else }}
{{- $tlsDir := include "memoryd.tlsDir" . }}
{{- $serverName := default (printf "%s.%s.svc" (include "memoryd.fullname" .) .Release.Namespace) $v.auth.tls.serverName }}
exec:
  command:
    - memoryd-healthcheck
    - --timeout
    - "3"
    - --address
    - {{ printf "127.0.0.1:%d" ($v.grpcPort | int) | quote }}
    - --tls-ca
    - {{ printf "%s/%s" $tlsDir $v.auth.tls.caKey }}
    - --server-name
    - {{ $serverName }}
    {{- if eq $v.auth.mode "mtls" }}
    {{- $dir := ternary (include "memoryd.probeTlsDir" .) $tlsDir (ne $v.auth.tls.probeClientSecret "") }}
    - --tls-cert
    - {{ printf "%s/%s" $dir (ternary "tls.crt" $v.auth.tls.certKey (ne $v.auth.tls.probeClientSecret "")) }}
    - --tls-key
    - {{ printf "%s/%s" $dir (ternary "tls.key" $v.auth.tls.keyKey (ne $v.auth.tls.probeClientSecret "")) }}
    {{- end }}
{{- end }}
{{- end }}

{{/*
startupProbe (the model load and a store open can take a while), then liveness and
readiness. All three ask grpc.health.v1; memoryd turns NOT_SERVING when a graceful
shutdown begins.
*/}}
{{- define "memoryd.probes" -}}
{{- $p := .Values.probes }}
{{- $action := include "memoryd.probeAction" . | trim }}
startupProbe:
  {{- $action | nindent 2 }}
  periodSeconds: {{ $p.startup.periodSeconds }}
  timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
  failureThreshold: {{ $p.startup.failureThreshold }}
livenessProbe:
  {{- $action | nindent 2 }}
  periodSeconds: {{ $p.liveness.periodSeconds }}
  timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
  failureThreshold: {{ $p.liveness.failureThreshold }}
readinessProbe:
  {{- $action | nindent 2 }}
  periodSeconds: {{ $p.readiness.periodSeconds }}
  timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
  failureThreshold: {{ $p.readiness.failureThreshold }}
{{- end }}

{{/* env of the memoryd container. */}}
{{- define "memoryd.env" -}}
- name: HOME
  value: {{ .Values.dataDir }}
{{- include "memoryd.secretEnv" . }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* volumeMounts of the memoryd container (cluster mode adds its auth and TLS mounts). */}}
{{- define "memoryd.commonMounts" -}}
- name: memoryd-config
  mountPath: {{ include "memoryd.configPath" . | dir }}
  readOnly: true
- name: memoryd-data
  mountPath: {{ .Values.dataDir }}
- name: memoryd-tmp
  mountPath: /tmp
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The checksum that rolls pods when config.yaml changes. */}}
{{- define "memoryd.configChecksum" -}}
{{- include "memoryd.config" . | sha256sum }}
{{- end }}

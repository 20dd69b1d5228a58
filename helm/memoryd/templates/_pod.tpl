{{/* Cluster mode: the pod template of the StatefulSet (embedded store) or Deployment (Qdrant). */}}
{{- define "memoryd.podTemplate" -}}
{{- $v := .Values }}
metadata:
  labels:
    {{- include "memoryd.selectorLabels" . | nindent 4 }}
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include "memoryd.configChecksum" . }}
    {{- if $v.auth.apiKeys.create }}
    checksum/api-keys: {{ $v.auth.apiKeys.content | sha256sum }}
    {{- end }}
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "memoryd.serviceAccountName" . }}
  automountServiceAccountToken: false
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml $v.podSecurityContext | nindent 4 }}
  # Longer than shutdown_grace_s: SIGTERM drains in-flight calls, then memoryd flushes.
  terminationGracePeriodSeconds: {{ add ($v.shutdownGraceSeconds | int) 15 }}
  containers:
    - name: memoryd
      image: {{ include "memoryd.image" . }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      args: ["serve", "--config", {{ include "memoryd.configPath" . | quote }}]
      env:
        {{- include "memoryd.env" . | nindent 8 }}
      ports:
        - name: grpc
          containerPort: {{ $v.grpcPort | int }}
          protocol: TCP
        {{- if $v.metrics.enabled }}
        - name: metrics
          containerPort: {{ $v.metrics.port | int }}
          protocol: TCP
        {{- end }}
      {{- include "memoryd.probes" . | trim | nindent 6 }}
      securityContext:
        {{- toYaml $v.securityContext | nindent 8 }}
      resources:
        {{- toYaml $v.resources | nindent 8 }}
      volumeMounts:
        {{- include "memoryd.commonMounts" . | nindent 8 }}
        {{- if eq $v.auth.mode "api_key" }}
        # A directory mount (no subPath), so a rotated Secret reaches the file; memoryd
        # notices the change (auth.keys_file_poll_s, 10 s) and reloads it.
        - name: api-keys
          mountPath: {{ include "memoryd.authDir" . }}
          readOnly: true
        {{- end }}
        {{- if $v.auth.tls.enabled }}
        - name: tls
          mountPath: {{ include "memoryd.tlsDir" . }}
          readOnly: true
        {{- if and (eq $v.auth.mode "mtls") $v.auth.tls.probeClientSecret }}
        - name: probe-tls
          mountPath: {{ include "memoryd.probeTlsDir" . }}
          readOnly: true
        {{- end }}
        {{- end }}
  volumes:
    - name: memoryd-config
      configMap:
        name: {{ include "memoryd.configMapName" . }}
    - name: memoryd-tmp
      emptyDir:
        sizeLimit: 256Mi
    {{- if or (eq $v.storage.backend "qdrant") (not $v.persistence.enabled) }}
    # On Qdrant nothing acknowledged is kept here: a write is answered once Qdrant has
    # applied it (storage.qdrant.shared; no local log). With persistence disabled on the
    # embedded store this holds everything, for as long as the pod lives.
    - name: memoryd-data
      emptyDir: {}
    {{- end }}
    {{- if eq $v.auth.mode "api_key" }}
    - name: api-keys
      secret:
        secretName: {{ include "memoryd.apiKeysSecretName" . }}
        defaultMode: 0440
    {{- end }}
    {{- if $v.auth.tls.enabled }}
    - name: tls
      secret:
        secretName: {{ $v.auth.tls.existingSecret }}
        defaultMode: 0440
    {{- if and (eq $v.auth.mode "mtls") $v.auth.tls.probeClientSecret }}
    - name: probe-tls
      secret:
        secretName: {{ $v.auth.tls.probeClientSecret }}
        defaultMode: 0440
    {{- end }}
    {{- end }}
    {{- with $v.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

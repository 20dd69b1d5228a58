{{/*
Sidecar mode: templates an agent's chart includes to put memoryd into its pod.

Call them with a context holding memoryd's values and the release:
  {{- $memoryd := dict "Values" .Values.memoryd "Release" .Release }}
(inside this chart itself, "." works). The pod then needs:

  initContainers:                     # `containers:` when sidecar.native=false
    {{- include "memoryd.sidecar.container" $memoryd | nindent 4 }}
  containers:
    - name: agent
      env:
        {{- include "memoryd.sidecar.clientEnv" $memoryd | nindent 8 }}
      volumeMounts:
        {{- include "memoryd.sidecar.clientVolumeMount" $memoryd | nindent 8 }}
  volumes:
    {{- include "memoryd.sidecar.volumes" $memoryd | nindent 4 }}

and a pod securityContext with an fsGroup (any), so that the socket memoryd creates on
the shared emptyDir (mode 0660) belongs to a group both containers are in.
memoryd.sidecar.podAnnotations rolls the pod when memoryd's config changes.
*/}}

{{- define "memoryd.sidecar.socketPath" -}}
{{- printf "%s/%s" .Values.sidecar.socketDir .Values.sidecar.socketName }}
{{- end }}

{{/* The memoryd container, as one list item. */}}
{{- define "memoryd.sidecar.container" -}}
- name: memoryd
  image: {{ include "memoryd.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if .Values.sidecar.native }}
  # A native sidecar: started (and startup-probed) before the agent, stopped after it.
  restartPolicy: Always
  {{- end }}
  args: ["serve", "--config", {{ include "memoryd.configPath" . | quote }}]
  env:
    {{- include "memoryd.env" . | nindent 4 }}
  {{- if .Values.metrics.enabled }}
  ports:
    - name: memoryd-metrics
      containerPort: {{ .Values.metrics.port | int }}
      protocol: TCP
  {{- end }}
  {{- include "memoryd.probes" . | trim | nindent 2 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  resources:
    {{- toYaml .Values.sidecar.resources | nindent 4 }}
  volumeMounts:
    - name: memoryd-socket
      mountPath: {{ .Values.sidecar.socketDir }}
    {{- include "memoryd.commonMounts" . | nindent 4 }}
{{- end }}

{{/* The pod volumes memoryd needs, as list items. */}}
{{- define "memoryd.sidecar.volumes" -}}
- name: memoryd-socket
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
- name: memoryd-config
  configMap:
    name: {{ include "memoryd.configMapName" . }}
- name: memoryd-tmp
  emptyDir:
    sizeLimit: 256Mi
{{- if not .Values.sidecar.persistence.volumeClaimTemplate }}
- name: memoryd-data
  {{- if .Values.sidecar.persistence.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.sidecar.persistence.existingClaim }}
  {{- else }}
  # No claim configured: memories live as long as the pod.
  emptyDir: {}
  {{- end }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* For an agent StatefulSet's volumeClaimTemplates (sidecar.persistence.volumeClaimTemplate). */}}
{{- define "memoryd.sidecar.volumeClaimTemplate" -}}
- metadata:
    name: memoryd-data
  spec:
    accessModes: [ReadWriteOnce]
    {{- with .Values.sidecar.persistence.storageClass }}
    storageClassName: {{ . }}
    {{- end }}
    resources:
      requests:
        storage: {{ .Values.sidecar.persistence.size }}
{{- end }}

{{/* The agent container's env: where the memoryd clients (and memoryctl) connect. */}}
{{- define "memoryd.sidecar.clientEnv" -}}
- name: MEMORYD_ADDRESS
  value: {{ printf "unix:%s" (include "memoryd.sidecar.socketPath" .) | quote }}
{{- end }}

{{/* The agent container's mounts: the socket directory and, read-only, the memory_root
(<dataDir>/memory_root on the data volume, memoryd's default). */}}
{{- define "memoryd.sidecar.clientVolumeMount" -}}
- name: memoryd-socket
  mountPath: {{ .Values.sidecar.socketDir }}
{{- with .Values.sidecar.memoryRoot }}
{{- if .enabled }}
- name: memoryd-data
  mountPath: {{ .mountPath }}
  readOnly: true
  {{- if .agent }}
  subPath: {{ printf "memory_root/%s/%s" $.Values.principal.tenantId .agent | quote }}
  {{- else }}
  subPath: memory_root
  {{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Pod annotations for the agent's pod template. */}}
{{- define "memoryd.sidecar.podAnnotations" -}}
checksum/memoryd-config: {{ include "memoryd.configChecksum" . }}
{{- end }}

{{/* The release's full name, at most 63 characters. */}}
{{- define "sluice.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Name of one app's resources: <fullname>-<app>. */}}
{{- define "sluice.appName" -}}
{{- printf "%s-%s" (include "sluice.fullname" .root | trunc 52 | trimSuffix "-") .app -}}
{{- end -}}

{{- define "sluice.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one app: call with (dict "root" $ "app" "ingest"). */}}
{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .app }}
{{- end -}}

{{- define "sluice.appLabels" -}}
{{ include "sluice.labels" .root }}
app.kubernetes.io/component: {{ .app }}
{{- end -}}

{{- define "sluice.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "sluice.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sluice.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
Fails the render unless the Secret's values are given: the chart never generates a key,
since a key generated at render time (`helm template`: Argo CD, Flux) changes at every render.
*/}}
{{- define "sluice.requireSecrets" -}}
{{- $s := .Values.secrets -}}
{{- $missing := list -}}
{{- if not $s.databaseUrl }}{{ $missing = append $missing "secrets.databaseUrl" }}{{ end -}}
{{- if not $s.adminTokens }}{{ $missing = append $missing "secrets.adminTokens" }}{{ end -}}
{{- if not $s.encryptionKey }}{{ $missing = append $missing "secrets.encryptionKey" }}{{ end -}}
{{- if $missing -}}
{{- fail (printf `
secrets: %s not set, and no secrets.existingSecret. The chart generates no key: one made at
render time would change at every render and leave the stored shared secrets unreadable.
Create the Secret once (in the release's namespace):
  kubectl create secret generic sluice --from-literal=DATABASE_URL='postgres://USER:PASSWORD@HOST:5432/sluice' --from-literal=ADMIN_TOKENS="$(openssl rand -hex 24)" --from-literal=SECRETS_ENCRYPTION_KEY="$(openssl rand -base64 32)"
then set secrets.existingSecret=sluice; or give secrets.databaseUrl, secrets.adminTokens and
secrets.encryptionKey (docs/kubernetes.md).` (join ", " $missing)) -}}
{{- end -}}
{{- end -}}

{{/*
Fails the render on replica bounds that cannot work. JSON schema (draft-07) cannot compare two
values, so values.schema.json checks each alone and this compares them.
*/}}
{{- define "sluice.validateScaling" -}}
{{- with .Values.ingest.autoscaling -}}
{{- if and .enabled (gt (int .minReplicas) (int .maxReplicas)) -}}
{{- fail (printf "ingest.autoscaling.minReplicas (%d) is above ingest.autoscaling.maxReplicas (%d)" (int .minReplicas) (int .maxReplicas)) -}}
{{- end -}}
{{- end -}}
{{- $partitions := int .Values.kafka.topicPartitions -}}
{{- range $app := list "router" "dispatcher" -}}
{{- $keda := (index $.Values $app).keda -}}
{{- if $keda.enabled -}}
{{- if gt (int $keda.minReplicaCount) (int $keda.maxReplicaCount) -}}
{{- fail (printf "%s.keda.minReplicaCount (%d) is above %s.keda.maxReplicaCount (%d)" $app (int $keda.minReplicaCount) $app (int $keda.maxReplicaCount)) -}}
{{- end -}}
{{- if gt (int $keda.maxReplicaCount) $partitions -}}
{{- fail (printf "%s.keda.maxReplicaCount (%d) is above kafka.topicPartitions (%d): consumers beyond the topic's partitions get no work" $app (int $keda.maxReplicaCount) $partitions) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The Secret with ADMIN_TOKENS, SECRETS_ENCRYPTION_KEY and DATABASE_URL. */}}
{{- define "sluice.secretName" -}}
{{- default (printf "%s-secrets" (include "sluice.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* A variable read from the Secret. */}}
{{- define "sluice.secretEnv" -}}
- name: {{ .key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "sluice.secretName" .root }}
      key: {{ .key }}
{{- end -}}

{{/* Variables every app reads (libs/config/src/base.env.ts), DATABASE_URL from the Secret. */}}
{{- define "sluice.commonEnv" -}}
{{- $v := .Values -}}
- name: KAFKA_BROKERS
  value: {{ required "kafka.brokers is required (host:port[,host:port...])" $v.kafka.brokers | quote }}
- name: KAFKA_CLIENT_ID
  value: {{ $v.kafka.clientId | quote }}
- name: KAFKA_TOPIC_PREFIX
  value: {{ $v.kafka.topicPrefix | quote }}
- name: KAFKA_TOPIC_PARTITIONS
  value: {{ $v.kafka.topicPartitions | quote }}
- name: KAFKA_REPLICATION_FACTOR
  value: {{ $v.kafka.replicationFactor | quote }}
- name: KAFKA_RETENTION_HOURS
  value: {{ $v.kafka.retentionHours | quote }}
- name: DATABASE_POOL_SIZE
  value: {{ $v.database.poolSize | quote }}
- name: SETTINGS_REFRESH_SECONDS
  value: {{ $v.database.settingsRefreshSeconds | quote }}
- name: LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: HTTP_HOST
  value: "0.0.0.0"
- name: SHUTDOWN_TIMEOUT_MS
  value: {{ $v.shutdownTimeoutMs | quote }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $v.tracing.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $v.tracing.protocol | quote }}
- name: OTEL_TRACES_SAMPLER
  value: parentbased_traceidratio
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $v.tracing.sampleRatio | quote }}
{{ include "sluice.secretEnv" (dict "root" . "key" "DATABASE_URL") }}
{{- end -}}

{{/* The top-level list `key` followed by the app's own: call with (dict "root" $ "app" "ingest" "key" "extraEnv"). */}}
{{- define "sluice.merged" -}}
{{- $list := concat (index .root.Values .key | default list) (index (index .root.Values .app) .key | default list) -}}
{{- if $list }}{{ toYaml $list }}{{ end -}}
{{- end -}}

{{/*
The pod's scheduling: nodeSelector, the app's tolerations and affinity (else the top-level
ones), and its topology spread constraints, whose missing labelSelector is the app's pods.
*/}}
{{- define "sluice.scheduling" -}}
{{- $values := index .root.Values .app -}}
{{- with .root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations | default .root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity | default .root.Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $values.topologySpreadConstraints }}
topologySpreadConstraints:
{{- $selector := dict "matchLabels" (include "sluice.selectorLabels" . | fromYaml) }}
{{- range $values.topologySpreadConstraints }}
  - {{- toYaml (ternary (set (deepCopy .) "labelSelector" $selector) . (not .labelSelector)) | nindent 4 }}
{{- end }}
{{- end }}
{{- end -}}

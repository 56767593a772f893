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
{{ include "sluice.secretEnv" (dict "root" . "key" "DATABASE_URL") }}
{{- end -}}

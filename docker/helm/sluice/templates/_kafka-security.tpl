{{/*
Kafka TLS and SASL (kafkaSecurity values, docs/kafka-security.md): the apps' variables, the
mounted TLS Secret, and the parameters KEDA's Kafka scaler takes for the same settings.
*/}}

{{/* Where the TLS Secret (ca.crt, tls.crt, tls.key) is mounted in every app. */}}
{{- define "sluice.kafkaTlsDir" -}}/etc/sluice/kafka-tls{{- end -}}

{{/* Where the SASL Secret's password is mounted with kafkaSecurity.sasl.passwordAsFile. */}}
{{- define "sluice.kafkaSaslDir" -}}/etc/sluice/kafka-sasl{{- end -}}

{{/* Whether the password reaches the apps as a mounted file (KAFKA_SASL_PASSWORD_FILE). */}}
{{- define "sluice.kafkaSaslPasswordFile" -}}
{{- if and (include "sluice.kafkaSaslPassword" .) .Values.kafkaSecurity.sasl.passwordAsFile }}true{{ end -}}
{{- end -}}

{{/* The Secret with KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD: its own, or the chart's. */}}
{{- define "sluice.kafkaSaslSecret" -}}
{{- $sasl := .Values.kafkaSecurity.sasl -}}
{{- if $sasl.secretName -}}{{ $sasl.secretName }}
{{- else if .Values.secrets.existingSecret -}}{{ .Values.secrets.existingSecret }}
{{- else -}}
{{- fail "kafkaSecurity.sasl: set kafkaSecurity.sasl.secretName, or secrets.existingSecret, to a Secret with the keys KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD" -}}
{{- end -}}
{{- end -}}

{{/* Whether the SASL mechanism takes a user name and password. */}}
{{- define "sluice.kafkaSaslPassword" -}}
{{- if has .Values.kafkaSecurity.sasl.mechanism (list "plain" "scram-sha-256" "scram-sha-512") }}true{{ end -}}
{{- end -}}

{{/* The apps' KAFKA_SSL* and KAFKA_SASL* variables (empty when Kafka is plaintext, no SASL). */}}
{{- define "sluice.kafkaSecurityEnv" -}}
{{- $s := .Values.kafkaSecurity -}}
{{- if $s.tls.enabled }}
- name: KAFKA_SSL
  value: "true"
- name: KAFKA_SSL_CHECK_HOSTNAME
  value: {{ $s.tls.checkHostname | quote }}
{{- if $s.tls.secretName }}
- name: KAFKA_SSL_CA_FILE
  value: {{ printf "%s/ca.crt" (include "sluice.kafkaTlsDir" .) | quote }}
{{- if $s.tls.clientCertificate }}
- name: KAFKA_SSL_CERT_FILE
  value: {{ printf "%s/tls.crt" (include "sluice.kafkaTlsDir" .) | quote }}
- name: KAFKA_SSL_KEY_FILE
  value: {{ printf "%s/tls.key" (include "sluice.kafkaTlsDir" .) | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if $s.sasl.mechanism }}
- name: KAFKA_SASL_MECHANISM
  value: {{ $s.sasl.mechanism | quote }}
{{- if include "sluice.kafkaSaslPassword" . }}
{{- $keys := list "KAFKA_SASL_USERNAME" "KAFKA_SASL_PASSWORD" }}
{{- if include "sluice.kafkaSaslPasswordFile" . }}
{{- /* The apps refuse KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE together. */}}
{{- $keys = list "KAFKA_SASL_USERNAME" }}
- name: KAFKA_SASL_PASSWORD_FILE
  value: {{ printf "%s/password" (include "sluice.kafkaSaslDir" .) | quote }}
{{- end }}
{{- range $key := $keys }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "sluice.kafkaSaslSecret" $ }}
      key: {{ $key }}
{{- end }}
{{- else }}
- name: KAFKA_SASL_OAUTHBEARER_TOKEN_FILE
  value: {{ required "kafkaSecurity.sasl.tokenFile is required with mechanism oauthbearer" $s.sasl.tokenFile | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The TLS Secret's volume mount (none without kafkaSecurity.tls.secretName), and the SASL
password's with passwordAsFile: a whole directory, not a subPath, so the kubelet's update of a
rotated Secret reaches the file and the next connection uses it without a restart.
*/}}
{{- define "sluice.kafkaTlsVolumeMount" -}}
{{- if and .Values.kafkaSecurity.tls.enabled .Values.kafkaSecurity.tls.secretName }}
- name: kafka-tls
  mountPath: {{ include "sluice.kafkaTlsDir" . }}
  readOnly: true
{{- end }}
{{- if include "sluice.kafkaSaslPasswordFile" . }}
- name: kafka-sasl
  mountPath: {{ include "sluice.kafkaSaslDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/* The TLS Secret's volume, and the SASL password's (its one key, as the file `password`). */}}
{{- define "sluice.kafkaTlsVolume" -}}
{{- if and .Values.kafkaSecurity.tls.enabled .Values.kafkaSecurity.tls.secretName }}
- name: kafka-tls
  secret:
    secretName: {{ .Values.kafkaSecurity.tls.secretName }}
{{- end }}
{{- if include "sluice.kafkaSaslPasswordFile" . }}
- name: kafka-sasl
  secret:
    secretName: {{ include "sluice.kafkaSaslSecret" . }}
    items:
      - key: KAFKA_SASL_PASSWORD
        path: password
{{- end }}
{{- end -}}

{{/* Whether the chart makes KEDA's TriggerAuthentication: TLS or a password mechanism is set. */}}
{{- define "sluice.kedaKafkaAuth" -}}
{{- if or .Values.kafkaSecurity.tls.enabled (include "sluice.kafkaSaslPassword" .) }}true{{ end -}}
{{- end -}}

{{/*
OAUTHBEARER with a KEDA scaler needs a TriggerAuthentication of the operator's: KEDA's Kafka
scaler fetches its own OAuth tokens (client credentials) and cannot read the apps' token file,
so the chart cannot make one; without it the scaler would reach the brokers unauthenticated.
*/}}
{{- define "sluice.kedaOauthCheck" -}}
{{- $keda := or .Values.router.keda.enabled .Values.dispatcher.keda.enabled }}
{{- if and $keda (eq .Values.kafkaSecurity.sasl.mechanism "oauthbearer") (not .Values.keda.authenticationRef) }}
{{- fail "kafkaSecurity.sasl.mechanism oauthbearer with router.keda or dispatcher.keda: set keda.authenticationRef to a TriggerAuthentication of yours (sasl: oauthbearer, and the client id, secret and token endpoint KEDA's Kafka scaler fetches tokens with; docs/kafka-security.md)" }}
{{- end }}
{{- end -}}

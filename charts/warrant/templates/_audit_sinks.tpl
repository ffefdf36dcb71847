{{/*
The remote audit sinks (values `auditSinks`): their `warrant serve` flags, volume mounts and
volumes. Secrets are mounted read-only under /etc/warrant/audit-<sink>/, spools under
/var/spool/warrant/<sink>.
*/}}

{{/* The sinks' flags, one list item per line. */}}
{{- define "warrant.auditSinkArgs" -}}
{{- with .Values.auditSinks.kafka }}
{{- if .enabled }}
- --audit-kafka-brokers={{ required "auditSinks.kafka.brokers is required with auditSinks.kafka.enabled" (join "," .brokers | default "") }}
- --audit-kafka-topic={{ .topic }}
{{- if .tls.enabled }}
- --audit-kafka-tls-ca-file=/etc/warrant/audit-kafka/tls/ca.crt
{{- if .tls.clientCertificate }}
- --audit-kafka-tls-cert-file=/etc/warrant/audit-kafka/tls/tls.crt
- --audit-kafka-tls-key-file=/etc/warrant/audit-kafka/tls/tls.key
{{- end }}
{{- end }}
{{- if .sasl.mechanism }}
{{- if and (eq .sasl.mechanism "PLAIN") (not .tls.enabled) }}
{{- fail "auditSinks.kafka.sasl.mechanism PLAIN sends the password in the clear: set auditSinks.kafka.tls.enabled" }}
{{- end }}
- --audit-kafka-sasl-mechanism={{ .sasl.mechanism }}
- --audit-kafka-sasl-username={{ required "auditSinks.kafka.sasl.username is required with a SASL mechanism" .sasl.username }}
- --audit-kafka-sasl-password-file=/etc/warrant/audit-kafka/sasl/password
{{- end }}
- --audit-kafka-compression={{ .compression }}
- --audit-kafka-batch-max-size={{ .batchMaxSize }}
- --audit-kafka-queue-size={{ .queueSize }}
- --audit-kafka-when-full={{ .whenFull }}
- --audit-kafka-block-timeout={{ .blockTimeout }}
- --audit-kafka-timeout={{ .timeout }}
{{- if .spool.enabled }}
- --audit-kafka-spool-dir=/var/spool/warrant/kafka
- --audit-kafka-spool-max-bytes={{ int64 .spool.maxBytes }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.auditSinks.webhook }}
{{- if .enabled }}
{{- if not (hasPrefix "https://" (required "auditSinks.webhook.url is required with auditSinks.webhook.enabled" .url)) }}
{{- fail "auditSinks.webhook.url must be an https:// URL" }}
{{- end }}
- --audit-webhook-url={{ .url }}
- --audit-webhook-ca-file=/etc/warrant/audit-webhook/tls/ca.crt
{{- if .tls.clientCertificate }}
- --audit-webhook-client-cert-file=/etc/warrant/audit-webhook/tls/tls.crt
- --audit-webhook-client-key-file=/etc/warrant/audit-webhook/tls/tls.key
{{- end }}
- --audit-webhook-format={{ .format }}
- --audit-webhook-gzip={{ .gzip }}
- --audit-webhook-batch-max-size={{ .batchMaxSize }}
- --audit-webhook-queue-size={{ .queueSize }}
- --audit-webhook-when-full={{ .whenFull }}
- --audit-webhook-block-timeout={{ .blockTimeout }}
- --audit-webhook-timeout={{ .timeout }}
{{- if .spool.enabled }}
- --audit-webhook-spool-dir=/var/spool/warrant/webhook
- --audit-webhook-spool-max-bytes={{ int64 .spool.maxBytes }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The sinks' volume mounts. */}}
{{- define "warrant.auditSinkMounts" -}}
{{- with .Values.auditSinks.kafka }}
{{- if .enabled }}
{{- if .tls.enabled }}
- {name: audit-kafka-tls, mountPath: /etc/warrant/audit-kafka/tls, readOnly: true}
{{- end }}
{{- if .sasl.mechanism }}
- {name: audit-kafka-sasl, mountPath: /etc/warrant/audit-kafka/sasl, readOnly: true}
{{- end }}
{{- if .spool.enabled }}
- {name: audit-kafka-spool, mountPath: /var/spool/warrant/kafka}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.auditSinks.webhook }}
{{- if .enabled }}
- {name: audit-webhook-tls, mountPath: /etc/warrant/audit-webhook/tls, readOnly: true}
{{- if .spool.enabled }}
- {name: audit-webhook-spool, mountPath: /var/spool/warrant/webhook}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* A spool's volume source: the one given, or an emptyDir a little larger than its bound. */}}
{{- define "warrant.spoolVolume" -}}
{{- if .volume }}
{{- toYaml .volume }}
{{- else }}
emptyDir:
  sizeLimit: {{ printf "%dMi" (add (div (int64 .maxBytes) 1048576) 64) }}
{{- end }}
{{- end }}

{{/* The sinks' volumes. */}}
{{- define "warrant.auditSinkVolumes" -}}
{{- with .Values.auditSinks.kafka }}
{{- if .enabled }}
{{- if .tls.enabled }}
- name: audit-kafka-tls
  secret: {secretName: {{ required "auditSinks.kafka.tls.secret is required with auditSinks.kafka.tls.enabled" .tls.secret }}}
{{- end }}
{{- if .sasl.mechanism }}
- name: audit-kafka-sasl
  secret:
    secretName: {{ required "auditSinks.kafka.sasl.passwordSecret is required with a SASL mechanism" .sasl.passwordSecret }}
    items: [{key: {{ .sasl.passwordKey }}, path: password}]
{{- end }}
{{- if .spool.enabled }}
- name: audit-kafka-spool
  {{- include "warrant.spoolVolume" .spool | trim | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.auditSinks.webhook }}
{{- if .enabled }}
- name: audit-webhook-tls
  secret: {secretName: {{ required "auditSinks.webhook.tls.secret is required with auditSinks.webhook.enabled (its ca.crt verifies the receiver)" .tls.secret }}}
{{- if .spool.enabled }}
- name: audit-webhook-spool
  {{- include "warrant.spoolVolume" .spool | trim | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

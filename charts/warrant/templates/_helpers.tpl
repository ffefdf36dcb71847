{{/* The chart's name. */}}
{{- define "warrant.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every resource name: the release name when it contains the chart's name. */}}
{{- define "warrant.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "warrant.labels" -}}
app.kubernetes.io/name: {{ include "warrant.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The pods' selector. */}}
{{- define "warrant.selectorLabels" -}}
app.kubernetes.io/name: {{ include "warrant.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "warrant.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "warrant.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The user name kube-apiserver gives warrant's service account. */}}
{{- define "warrant.serviceAccountUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "warrant.serviceAccountName" . }}
{{- end -}}

{{- define "warrant.configMapName" -}}
{{- default (printf "%s-config" (include "warrant.fullname" .)) .Values.config.name -}}
{{- end -}}

{{/* The Secret holding tls.crt, tls.key and ca.crt. */}}
{{- define "warrant.tlsSecretName" -}}
{{- if .Values.tls.certManager.enabled -}}
{{- printf "%s-tls" (include "warrant.fullname" .) -}}
{{- else -}}
{{- default (printf "%s-tls" (include "warrant.fullname" .)) .Values.tls.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* The Service's DNS name, the name on the serving certificate. */}}
{{- define "warrant.serviceHost" -}}
{{- printf "%s.%s.svc" (include "warrant.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* The Secret Prometheus authenticates with a client certificate from. */}}
{{- define "warrant.metricsClientSecretName" -}}
{{- if .Values.monitoring.serviceMonitor.clientCertificateSecret -}}
{{- .Values.monitoring.serviceMonitor.clientCertificateSecret -}}
{{- else -}}
{{- printf "%s-metrics-client" (include "warrant.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Refuses a chain whose DeletionGuard names differ from those the webhooks match on. */}}
{{- define "warrant.checkGuardNames" -}}
{{- $names := .Values.guardNames -}}
{{- range $i, $a := (.Values.config.chain.authorizers | default list) -}}
{{- if and (eq ($a.type | toString) "DeletionGuard") $a.guard -}}
{{- $g := $a.guard -}}
{{- if and $g.protectionLabel (ne $g.protectionLabel $names.protectionLabel) -}}
{{- fail (printf "config.chain.authorizers[%d].guard.protectionLabel %q differs from guardNames.protectionLabel %q: the webhooks would not send what the guard protects" $i $g.protectionLabel $names.protectionLabel) -}}
{{- end -}}
{{- if $g.buffer -}}
{{- range $k, $v := dict "finalizer" $names.bufferFinalizer "confirmationAnnotation" $names.confirmationAnnotation "requesterAnnotation" $names.requesterAnnotation -}}
{{- $set := index $g.buffer $k -}}
{{- if and $set (ne $set $v) -}}
{{- fail (printf "config.chain.authorizers[%d].guard.buffer.%s %q differs from the guardNames value %q" $i $k $set $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

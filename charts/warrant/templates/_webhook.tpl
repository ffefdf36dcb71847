{{/* Fields every webhook of the validation ring shares. */}}
{{- define "warrant.webhookCommon" -}}
admissionReviewVersions: [v1]
clientConfig:
  service: {namespace: {{ .Release.Namespace }}, name: {{ include "warrant.fullname" . }}, path: /admit, port: {{ .Values.service.port }}}
  {{- if not .Values.tls.certManager.enabled }}
  caBundle: {{ required "tls.caBundle (the base64 PEM of the CA that signed the serving certificate) is required without tls.certManager.enabled" .Values.tls.caBundle }}
  {{- end }}
sideEffects: NoneOnDryRun
timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}
matchPolicy: Equivalent
{{- end -}}

{{/* The namespaced kinds' rules, for the given operations (DELETE, or DELETE and UPDATE: then
     the status subresources too, whose strategies keep metadata changes). */}}
{{- define "warrant.webhookRulesNamespaced" -}}
{{- $ops := . -}}
{{- $updates := has "UPDATE" $ops -}}
- apiGroups: [""]
  apiVersions: [v1]
  operations: {{ toJson $ops }}
  resources: {{ if $updates }}[services, services/status, persistentvolumeclaims, persistentvolumeclaims/status]{{ else }}[services, persistentvolumeclaims]{{ end }}
  scope: Namespaced
- apiGroups: [apps]
  apiVersions: [v1]
  operations: {{ toJson $ops }}
  resources: {{ if $updates }}[deployments, deployments/status, statefulsets, statefulsets/status, daemonsets, daemonsets/status, replicasets, replicasets/status]{{ else }}[deployments, statefulsets, daemonsets, replicasets]{{ end }}
  scope: Namespaced
- apiGroups: [networking.k8s.io]
  apiVersions: [v1]
  operations: {{ toJson $ops }}
  resources: {{ if $updates }}[ingresses, ingresses/status]{{ else }}[ingresses]{{ end }}
  scope: Namespaced
{{- end -}}

{{/* The matchConditions: not warrant itself for its own changes (its finalizer, its requester
     annotation; a change of the protection label or the confirmation annotation by it is sent),
     not the control plane, and UPDATEs only when the ring judges them (see the comment at the
     top of the webhook configuration). */}}
{{- define "warrant.webhookMatchConditions" -}}
{{- $label := .Values.guardNames.protectionLabel -}}
{{- $fin := .Values.guardNames.bufferFinalizer -}}
{{- $conf := .Values.guardNames.confirmationAnnotation -}}
{{- $req := .Values.guardNames.requesterAnnotation -}}
- name: not-warrants-own-changes
  expression: >-
    request.userInfo.username != '{{ include "warrant.serviceAccountUser" . }}'
    || (request.operation == 'UPDATE'
    && ((has(oldObject.metadata.labels)
    && '{{ $label }}' in oldObject.metadata.labels
    && (!has(object.metadata.labels)
    || !('{{ $label }}' in object.metadata.labels)
    || object.metadata.labels['{{ $label }}']
    != oldObject.metadata.labels['{{ $label }}']))
    || ((has(object.metadata.annotations)
    && '{{ $conf }}' in object.metadata.annotations)
    ? (!has(oldObject.metadata.annotations)
    || !('{{ $conf }}' in oldObject.metadata.annotations)
    || oldObject.metadata.annotations['{{ $conf }}']
    != object.metadata.annotations['{{ $conf }}'])
    : (has(oldObject.metadata.annotations)
    && '{{ $conf }}' in oldObject.metadata.annotations))))
- name: not-control-plane
  expression: >-
    !(request.userInfo.username in {{ .Values.webhook.excludedUsers | toJson | replace "\"" "'" | replace "," ", " }})
    && !request.userInfo.username.startsWith('system:serviceaccount:kube-system:')
- name: judged-updates-only
  expression: >-
    request.operation != 'UPDATE'
    || (has(oldObject.metadata.labels)
    && '{{ $label }}' in oldObject.metadata.labels
    && (!has(object.metadata.labels)
    || !('{{ $label }}' in object.metadata.labels)
    || object.metadata.labels['{{ $label }}']
    != oldObject.metadata.labels['{{ $label }}']))
    || (has(oldObject.metadata.finalizers)
    && '{{ $fin }}' in oldObject.metadata.finalizers
    && (!has(object.metadata.finalizers)
    || !('{{ $fin }}' in object.metadata.finalizers)))
    || ((has(object.metadata.annotations)
    && '{{ $conf }}' in object.metadata.annotations)
    ? (!has(oldObject.metadata.annotations)
    || !('{{ $conf }}' in oldObject.metadata.annotations)
    || oldObject.metadata.annotations['{{ $conf }}']
    != object.metadata.annotations['{{ $conf }}'])
    : (has(oldObject.metadata.annotations)
    && '{{ $conf }}' in oldObject.metadata.annotations))
    || ((has(object.metadata.annotations)
    && '{{ $req }}' in object.metadata.annotations)
    ? (!has(oldObject.metadata.annotations)
    || !('{{ $req }}' in oldObject.metadata.annotations)
    || oldObject.metadata.annotations['{{ $req }}']
    != object.metadata.annotations['{{ $req }}'])
    : (has(oldObject.metadata.annotations)
    && '{{ $req }}' in oldObject.metadata.annotations))
{{- end -}}

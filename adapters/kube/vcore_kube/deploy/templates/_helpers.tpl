{{/* The scheduler's objects' name (and its Lease's): fullnameOverride, else the release's name. */}}
{{- define "vcore-scheduler.fullname" -}}
{{- .Values.fullnameOverride | default .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vcore-scheduler.selectorLabels" -}}
app.kubernetes.io/name: vcore-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vcore-scheduler.labels" -}}
{{ include "vcore-scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "vcore-scheduler.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The container's security: no root, no privilege, a read-only root filesystem. */}}
{{- define "vcore-scheduler.securityContext" -}}
runAsNonRoot: true
runAsUser: 65532
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end -}}

{{/* vcore-scheduler's config.yaml: .Values.config with the keys this chart sets from its own values. */}}
{{- define "vcore-scheduler.config" -}}
{{- range $key := list "leaderElection" "metricsAddress" "warmPools" }}
{{- if hasKey $.Values.config $key }}
{{- fail (printf "config.%s: set by the chart; use its values leaderElection, metrics.port, warmPools" $key) }}
{{- end }}
{{- end }}
{{- $config := deepCopy .Values.config }}
{{- $le := .Values.leaderElection }}
{{- $_ := set $config "leaderElection" (dict "leaderElect" $le.enabled "leaseDuration" $le.leaseDuration
      "renewDeadline" $le.renewDeadline "retryPeriod" $le.retryPeriod
      "resourceNamespace" .Release.Namespace "resourceName" (include "vcore-scheduler.fullname" .)) }}
{{- $_ := set $config "metricsAddress" (printf "0.0.0.0:%d" (int .Values.metrics.port)) }}
{{- $wp := .Values.warmPools }}
{{- $_ := set $config "warmPools" (dict "enabled" $wp.enabled
      "placeholderPriorityClass" $wp.placeholderPriorityClass "placeholderImage" $wp.placeholderImage) }}
{{- toYaml $config }}
{{- end -}}

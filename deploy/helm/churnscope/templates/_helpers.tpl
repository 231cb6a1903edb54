{{- define "churnscope.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "churnscope.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "churnscope.labels" -}}
{{ include "churnscope.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "churnscope.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "churnscope.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{/* churnscope.yaml: the values turned into the configuration file's keys; secrets are referenced by environment variable. */}}
{{- define "churnscope.config" -}}
{{- $config := dict "dataDir" "/data" "apiservers" .Values.apiservers -}}
{{- if .Values.prometheus.url -}}
{{- $prometheus := dict "url" .Values.prometheus.url "scrapeIntervalSeconds" .Values.prometheus.scrapeIntervalSeconds "flavor" .Values.prometheus.flavor "maxSourceResolution" .Values.prometheus.maxSourceResolution -}}
{{- if .Values.prometheus.bearerTokenSecret.name -}}{{- $_ := set $prometheus "bearerToken" (dict "env" "PROMETHEUS_BEARER_TOKEN") -}}{{- end -}}
{{- $_ := set $config "prometheus" $prometheus -}}
{{- end -}}
{{- if .Values.clusters -}}{{- $_ := set $config "clusters" .Values.clusters -}}{{- end -}}
{{- $auth := dict -}}
{{- if .Values.auth.userHeader -}}{{- $_ := set $auth "userHeader" .Values.auth.userHeader -}}{{- end -}}
{{- if .Values.auth.bearerTokenSecret.name -}}{{- $_ := set $auth "bearerToken" (dict "env" "CHURNSCOPE_BEARER_TOKEN") -}}{{- end -}}
{{- if $auth -}}{{- $_ := set $config "auth" $auth -}}{{- end -}}
{{- if .Values.audit.webhook.tokenSecret.name -}}{{- $_ := set $config "audit" (dict "webhookToken" (dict "env" "AUDIT_WEBHOOK_TOKEN")) -}}{{- end -}}
{{- if .Values.audit.webhook.tlsSecret -}}
{{- $_ := set $config "server" (dict "port" 3000 "host" "0.0.0.0" "tls" (dict "port" (int .Values.audit.webhook.tlsPort) "certFile" "/etc/churnscope/tls/tls.crt" "keyFile" "/etc/churnscope/tls/tls.key")) -}}
{{- end -}}
{{- if .Values.store.postgres.urlSecret.name -}}
{{- $_ := set $config "store" (dict "engine" "postgres" "url" (dict "env" "CHURNSCOPE_DATABASE_URL") "poolSize" (int .Values.store.postgres.poolSize) "tls" (dict "mode" .Values.store.postgres.tlsMode)) -}}
{{- end -}}
{{- toYaml (mergeOverwrite $config .Values.config) -}}
{{- end -}}

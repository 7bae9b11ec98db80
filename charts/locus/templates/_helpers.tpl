{{/* Names and labels shared by every manifest of the chart. */}}
{{- define "locus.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "locus.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "locus.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "locus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "locus.apiSelector" -}}
app.kubernetes.io/name: {{ include "locus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: api
{{- end -}}

{{- define "locus.operatorSelector" -}}
app.kubernetes.io/name: {{ include "locus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "locus.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The store and bus settings both the API pods and the operator read. */}}
{{- define "locus.storeEnv" -}}
- name: LOCUS_STORE
  valueFrom:
    secretKeyRef:
      name: {{ .Values.mongodb.existingSecret }}
      key: {{ .Values.mongodb.secretKey }}
{{- end -}}

{{- define "locus.busEnv" -}}
{{- if .Values.nats.existingSecret -}}
- name: LOCUS_BUS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.existingSecret }}
      key: {{ .Values.nats.secretKey }}
{{- else -}}
- name: LOCUS_BUS
  value: {{ .Values.nats.url | quote }}
{{- end -}}
{{- end -}}

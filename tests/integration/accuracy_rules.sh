#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# accuracy_rules.sh - dist/flowsketch-accuracy.rules.yml, the alert rules
# shipped for the sketches' live error, with Prometheus' own tools:
#   - promtool check rules reads the file (3 rules);
#   - promtool test rules, on series written here in the daemon's metric
#     names (service/metrics.c, put_accuracy()): an undercount fires
#     FlowsketchCountMinUndercount at once; an alarm held 5 minutes fires
#     FlowsketchAccuracyAlarm with its kind, one of 3 minutes does not, a
#     healthy host fires nothing; traffic with an empty sample for 15
#     minutes fires FlowsketchAccuracyUnchecked.
# Each expected alert is also asserted absent where it must not fire, so
# a rule that fires always (or never) fails a case.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/tap.sh

RULES=$PWD/dist/flowsketch-accuracy.rules.yml
WORK=$(mktemp -d /tmp/fs-rules.XXXXXX) || exit 2
trap 'rm -rf "$WORK"' EXIT
command -v promtool >/dev/null || bail "promtool is installed (scripts/deps.sh: prometheus)"

check "promtool check rules reads $RULES: 3 rules" \
	eval 'promtool check rules "$RULES" >"$WORK/check.out" 2>&1 && grep -q "SUCCESS: 3 rules found" "$WORK/check.out"'

# rules_test NAME SERIES-YAML ALERTS-YAML: one promtool test of the file.
rules_test() {
	cat >"$WORK/$1.yml" <<YAML
rule_files:
  - $RULES
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
$2
    alert_rule_test:
$3
YAML
	promtool test rules "$WORK/$1.yml" >"$WORK/$1.out" 2>&1 || { sed 's/^/# /' "$WORK/$1.out"; return 1; }
}

check "an undercount fires FlowsketchCountMinUndercount, a flat counter does not" rules_test under '
      - series: flowsketch_accuracy_undercounts_total{instance="a"}
        values: 0 0 0 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2
      - series: flowsketch_accuracy_undercounts_total{instance="b"}
        values: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0' '
      - eval_time: 2m
        alertname: FlowsketchCountMinUndercount
        exp_alerts: []
      - eval_time: 4m
        alertname: FlowsketchCountMinUndercount
        exp_alerts:
          - exp_labels: {severity: critical, instance: a}
            exp_annotations:
              summary: "flowsketch on a: Count-Min undercounted sampled flows"
              description: "2 sampled flows were counted below their exact count in 10 minutes; Count-Min never does that. Run `flowsketch accuracy --span 10m`."'

check "an alarm held 5 minutes fires FlowsketchAccuracyAlarm with its kind; 3 minutes and a healthy host do not" rules_test alarm '
      - series: flowsketch_accuracy_alarm{instance="a", kind="overcount"}
        values: 0 1 1 1 1 1 1 1 1 1
      - series: flowsketch_accuracy_alarm{instance="b", kind="distinct"}
        values: 0 1 1 1 0 0 0 0 0 0
      - series: flowsketch_accuracy_alarm{instance="c", kind="undercount"}
        values: 0 0 0 0 0 0 0 0 0 0' '
      - eval_time: 4m
        alertname: FlowsketchAccuracyAlarm
        exp_alerts: []
      - eval_time: 7m
        alertname: FlowsketchAccuracyAlarm
        exp_alerts:
          - exp_labels: {severity: warning, instance: a, kind: overcount}
            exp_annotations:
              summary: "flowsketch on a: measured overcount error outside its design"
              description: "The keyed sample says the sketches'"'"' overcount error left its bound for 5 minutes. Run `flowsketch accuracy --span 10m`; resize (flowsketch size) if the sketch is overfull."'

check "traffic with an empty sample for 15 minutes fires FlowsketchAccuracyUnchecked; a sample that holds flows does not" rules_test unchecked '
      - series: flowsketch_accuracy_sample_flows{instance="a"}
        values: 0x25
      - series: flowsketch_accuracy_sample_flows{instance="b"}
        values: 40x25
      - series: flowsketch_packets_total{instance="a", interface="eth0", direction="in"}
        values: 0+1000x25
      - series: flowsketch_packets_total{instance="b", interface="eth0", direction="in"}
        values: 0+1000x25' '
      - eval_time: 10m
        alertname: FlowsketchAccuracyUnchecked
        exp_alerts: []
      - eval_time: 24m
        alertname: FlowsketchAccuracyUnchecked
        exp_alerts:
          - exp_labels: {severity: info, instance: a}
            exp_annotations:
              summary: "flowsketch on a: traffic but no sampled flow"
              description: "Windows carry traffic and the keyed sample holds no flow: raise --sample-rate (1/N with a smaller N) to keep the error checked."'
finish

#!/usr/bin/env python3
"""Writes corpus.yaml, the differential CEL corpus (see README.md). Edit this file, rerun it,
and commit both: `python3 tests/celdiff/gen_corpus.py`."""
import json, os

REVIEWS = {
    "alice": {"user": "alice", "uid": "1", "groups": ["group1", "group2"],
              "extra": {"key1": ["a", "b", "c"]},
              "resourceAttributes": {"namespace": "kittensandponies", "verb": "get", "group": "apps",
                                     "version": "v1", "resource": "deployments", "subresource": "scale",
                                     "name": "web"}},
    "alice2": {"user": "alice2", "nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
    "bob": {"user": "bob", "groups": ["dev"], "nonResourceAttributes": {"path": "/api/v1", "verb": "get"}},
    "empty": {"nonResourceAttributes": {}},
    "minimal-resource": {"user": "carol", "resourceAttributes": {"verb": "list", "resource": "pods"}},
    "selectors": {"user": "alice", "groups": ["group1"],
                  "resourceAttributes": {"namespace": "default", "verb": "list", "version": "v1", "resource": "pods",
                      "fieldSelector": {"requirements": [{"key": "foo", "operator": "In", "values": ["bar"]},
                                                         {"key": "spec.nodeName", "operator": "NotIn", "values": ["n1", "n2"]}]},
                      "labelSelector": {"requirements": [{"key": "baz", "operator": "In", "values": ["qux"]},
                                                         {"key": "app", "operator": "Exists"}]}}},
    "raw-selector": {"user": "alice",
                     "resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods",
                         "fieldSelector": {"rawSelector": "foo=bar"},
                         "labelSelector": {"rawSelector": "baz=qux",
                                           "requirements": [{"key": "baz", "operator": "In", "values": ["qux"]}]}}},
    "empty-selectors": {"user": "alice",
                        "resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods",
                            "fieldSelector": {}, "labelSelector": {"requirements": []}}},
    "deleter": {"user": "system:serviceaccount:ci:deployer", "uid": "u-9",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"],
                "extra": {"warrant.dev/ticket": ["CHG-1001"], "authentication.kubernetes.io/pod-name": ["runner-1"]},
                "resourceAttributes": {"namespace": "production", "verb": "delete", "group": "apps", "version": "v1",
                                       "resource": "statefulsets", "name": "db"}},
    "admin": {"user": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"],
              "resourceAttributes": {"verb": "deletecollection", "resource": "namespaces"}},
    "unicode": {"user": "jürgen-ü", "groups": ["ünïcode", "日本"], "extra": {"ключ": ["значение"]},
                "resourceAttributes": {"namespace": "ns", "verb": "get", "resource": "pods", "name": "под"}},
    "many-groups": {"user": "mallory", "groups": [f"g{i}" for i in range(300)],
                    "resourceAttributes": {"namespace": "x", "verb": "get", "resource": "pods"}},
}

cases = []
seen = set()

def add(area, expr, review, name=None):
    base = f"{area}/{name or len([c for c in cases if c['id'].startswith(area + '/')])}"
    cid = f"{base}@{review}"
    n = 2
    while cid in seen:
        cid = f"{base}-{n}@{review}"; n += 1
    seen.add(cid)
    cases.append({"id": cid, "expression": expr, "review": review})

ALL = list(REVIEWS)
SOME = ["alice", "alice2", "empty", "minimal-resource", "selectors"]

# Spec section 7 vectors 17-28 and 38, verbatim.
for e in ["request.user == 'alice'", "request.uid == '1'", "'group1' in request.groups",
          "'key1' in request.extra", "!('key2' in request.extra)", "'a' in request.extra['key1']",
          "!('z' in request.extra['key1'])",
          "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kittensandponies'",
          "'group3' in request.groups", "request.uid == '2'", "('group3' in request.group)",
          "request.user", "request.nonResourceAttributes.verb == 2",
          "request.user == 'alice2'", "request.resourceAttributes.namespace == 'kittensandponies'",
          "request.user != 'alice2'", "request.user == 'bob'",
          "has(request.nonResourceAttributes) && request.nonResourceAttributes.verb == 'get'",
          "has(request.resourceAttributes) && request.resourceAttributes.verb == 'get'",
          "request.resourceAttributes.verb == 'get'",
          "request.?resourceAttributes.fieldSelector.requirements.orValue([]).exists(r, r.key=='foo' && r.operator=='In' && ('bar' in r.values))",
          "request.?resourceAttributes.?labelSelector.requirements.orValue([]).exists(r, r.key=='baz' && r.operator=='In' && ('qux' in r.values))",
          "request.?resourceAttributes.labelSelector.?requirements.orValue([]).exists(r, r.key=='baz' && r.operator=='In' && ('qux' in r.values))",
          "request.time == 'now'", "request++'", "x.user", "test", "request.user = 'test'", "  "]:
    for r in ["alice", "alice2", "bob", "empty", "selectors"]:
        add("spec-vectors", e, r)

# Every field, equality and presence.
fields = ["user", "uid"]
for f in fields:
    for r in ALL:
        add("field/eq", f"request.{f} == ''", r, f)
        add("field/has", f"has(request.{f})", r, f)
for r in ALL:
    add("field/groups-size", "size(request.groups) > 0", r)
    add("field/extra-size", "size(request.extra) == 0", r)
    add("field/has-groups", "has(request.groups)", r)
    add("field/has-extra", "has(request.extra)", r)
    add("field/has-ra", "has(request.resourceAttributes)", r)
    add("field/has-nra", "has(request.nonResourceAttributes)", r)
for f in ["namespace", "verb", "group", "version", "resource", "subresource", "name"]:
    for r in ALL:
        add("resource/eq", f"request.resourceAttributes.{f} == ''", r, f)
    for r in SOME:
        add("resource/has", f"has(request.resourceAttributes.{f})", r, f)
        add("resource/opt", f"request.?resourceAttributes.{f}.orValue('none') != 'none'", r, f)
        add("resource/guarded", f"has(request.resourceAttributes) && request.resourceAttributes.{f}.size() >= 0", r, f)
for f in ["path", "verb"]:
    for r in ALL:
        add("nonresource/eq", f"request.nonResourceAttributes.{f} == ''", r, f)
    for r in SOME:
        add("nonresource/has", f"has(request.nonResourceAttributes.{f})", r, f)
for sel in ["fieldSelector", "labelSelector"]:
    for r in ["alice", "selectors", "raw-selector", "empty-selectors", "minimal-resource", "alice2"]:
        add("selector/has", f"has(request.resourceAttributes.{sel})", r, sel)
        add("selector/has-raw", f"has(request.resourceAttributes.{sel}) && has(request.resourceAttributes.{sel}.rawSelector)", r, sel)
        add("selector/raw", f"request.resourceAttributes.{sel}.rawSelector != ''", r, sel)
        add("selector/req-size", f"request.resourceAttributes.{sel}.requirements.size() > 0", r, sel)
        add("selector/opt", f"request.?resourceAttributes.{sel}.requirements.orValue([]).size() > 1", r, sel)
        add("selector/opt-raw", f"request.?resourceAttributes.?{sel}.?rawSelector.orValue('') == ''", r, sel)
        add("selector/values", f"request.?resourceAttributes.{sel}.requirements.orValue([]).all(q, q.values.size() >= 0 && q.key != '' && q.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])", r, sel)
        add("selector/undefined", f"request.resourceAttributes.{sel}.selector == ''", r, sel)
    add("selector/in-map", f"'{sel}' in request.resourceAttributes", "selectors", sel)
add("selector/undefined-field", "request.resourceAttributes.fieldSelector.requirements[0].value == 'x'", "selectors")
add("selector/index", "request.resourceAttributes.fieldSelector.requirements[1].values[1] == 'n2'", "selectors")
add("selector/index-oob", "request.resourceAttributes.fieldSelector.requirements[5].key == 'x'", "selectors")

# Undefined fields and type errors.
for e in ["request.group == 'x'", "request.resourceAttributes.kind == 'x'", "request.nonResourceAttributes.name == 'x'",
          "request.users == ['x']", "has(request.foo)", "request.?foo.orValue('') == ''", "request.user.name == 'x'",
          "request.groups.user == 'x'", "request.extra.key1 == ['a']", "request.extra.key1[0] == 'a'",
          "request.user == 1", "request.user > 1", "request.user + 1 == 'x'", "request.groups == 'x'",
          "request.groups + 'x' == []", "request.extra == []", "request.uid == true", "size(request.user) == 'x'",
          "request.user.startsWith(1)", "request.groups.exists(g, g)", "request.groups.all(g, g + 1)",
          "request.groups.map(g, g == 1)[0]", "request.user in request.extra", "1 in request.groups",
          "request.user", "request.uid + ''", "request.groups", "request.extra", "request.resourceAttributes",
          "size(request.groups)", "request.groups.map(g, g)", "1 + 1", "'a'", "null", "[true]", "{'a': true}",
          "request.resourceAttributes == null", "request.user == null", "request.groups[0]",
          "request.groups['a'] == 'b'", "request.extra[1] == []", "dyn(request.user) == 1", "dyn(request.user)",
          "request.user.matches(1)", "int(request.user) == 1", "!request.user", "-request.user == ''",
          "request.user ? true : false", "true ? 1 : 'a'", "[1, 'a'].size() == 2", "{'a': 1, 'b': 'c'}.size() == 2",
          "[1, 2.0].size() == 2", "[[1], ['a']].size() == 2", "{1: 'a', 'b': 'c'}.size() == 2",
          "request.resourceAttributes.verb.size() == 3u", "type(request.user) == string", "type(request.groups) == list",
          "type(request.extra) == map", "type(1) == int", "type(request.resourceAttributes) == map"]:
    for r in ["alice", "alice2"]:
        add("types", e, r)

# Error absorption by && and || and the conditional.
absorb = ["request.resourceAttributes.verb == 'get' && false", "false && request.resourceAttributes.verb == 'get'",
          "request.resourceAttributes.verb == 'get' || true", "true || request.resourceAttributes.verb == 'get'",
          "request.resourceAttributes.verb == 'get' && true", "true && request.resourceAttributes.verb == 'get'",
          "request.resourceAttributes.verb == 'get' || false", "false || request.resourceAttributes.verb == 'get'",
          "request.resourceAttributes.verb == 'get' || request.nonResourceAttributes.verb == 'get'",
          "request.resourceAttributes.verb == 'get' && request.nonResourceAttributes.verb == 'get'",
          "!(request.resourceAttributes.verb == 'get')", "(request.resourceAttributes.verb == 'get') ? true : false",
          "has(request.resourceAttributes) ? request.resourceAttributes.verb == 'get' : request.nonResourceAttributes.verb == 'get'",
          "request.groups.exists(g, g == 'dev' || request.resourceAttributes.verb == 'get')",
          "request.groups.all(g, g != 'x' && request.resourceAttributes.verb == 'get')",
          "[1, 2].exists(x, x / 0 == 1 || x == 2)", "[1, 2].all(x, x / 0 == 1 && x == 3)",
          "[0, 1].exists_one(x, 1 / x == 1)", "1 / 0 == 1 || true", "false && 1 / 0 == 1"]
for e in absorb:
    for r in ["alice", "alice2", "bob"]:
        add("absorb", e, r)

# Macros.
macros = ["request.groups.exists(g, g.startsWith('group'))", "request.groups.all(g, g.startsWith('group'))",
          "request.groups.exists_one(g, g == 'group1')", "request.groups.map(g, g.upperAscii()) == ['GROUP1', 'GROUP2']",
          "request.groups.filter(g, g.endsWith('2')).size() == 1", "request.groups.map(g, g.size() > 5, g) == []",
          "request.extra.exists(k, k == 'key1')", "request.extra.all(k, request.extra[k].size() > 0)",
          "request.extra.map(k, k).size() == request.extra.size()", "request.extra.filter(k, k.startsWith('warrant.dev/')).size() > 0",
          "request.groups.exists(g, request.groups.exists(h, g != h))", "[1, 2, 3].map(x, x * 2) == [2, 4, 6]",
          "[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]", "[].all(x, x)", "[].exists(x, x)", "{}.all(k, false)",
          "[1, 2, 3].exists_one(x, x > 1)", "request.groups.existsOne(g, g == 'dev')", "has(request.extra.key1)",
          "has(request.extra.missing)", "has({'a': 1}.a)", "has({'a': 1}.b)", "request.groups.map(x, x).map(y, y + '!').size() >= 0",
          "[[1, 2], [3]].all(l, l.all(x, x > 0))", "request.groups.exists(g, g in ['dev', 'group2'])",
          "cel.bind(u, request.user, u.size() > 0 && u != 'x')", "cel.bind(g, request.groups, g.size() == size(request.groups))",
          "cel.bind(a, 1, cel.bind(b, 2, a + b == 3))", "cel.bind(x, request.resourceAttributes, x.verb == 'get')",
          "request.groups.all(g, g.matches('^[a-z0-9:-]+$'))"]
for e in macros:
    for r in ["alice", "bob", "deleter", "empty"]:
        add("macros", e, r)

# Optional syntax.
opts = ["request.?resourceAttributes.namespace.orValue('') == 'kittensandponies'", "request.?resourceAttributes.hasValue()",
        "request.?nonResourceAttributes.?path.orValue('/') == '/healthz'", "request.extra[?'key1'].orValue([]).size() == 3",
        "request.extra[?'nope'].hasValue()", "request.groups[?0].orValue('') == 'group1'", "request.groups[?5].hasValue()",
        "optional.of(1).value() == 1", "optional.none().hasValue()", "optional.ofNonZeroValue('').hasValue()",
        "optional.of('x').or(optional.none()).value() == 'x'", "optional.none().orValue(3) == 3",
        "request.?resourceAttributes.namespace.optMap(n, n.size()).orValue(0) > 0",
        "[?optional.of(1), ?optional.none()].size() == 1", "{?'a': optional.of(1), ?'b': optional.none()}.size() == 1",
        "request.?resourceAttributes.value().verb == 'get'", "request.?resourceAttributes.verb.value() == 'get'",
        "request.?user.orValue('') == request.user", "request.?extra.key1.orValue([]).size() >= 0",
        "optional.none().value() == 1"]
for e in opts:
    for r in ["alice", "alice2", "empty"]:
        add("optional", e, r)

# Strings.
strs = ["request.user.lowerAscii() == 'alice'", "request.user.upperAscii() == 'ALICE'", "request.user.charAt(0) == 'a'",
        "request.user.charAt(100) == ''", "request.user.indexOf('i') == 2", "request.user.indexOf('z') == -1",
        "request.user.indexOf('l', 2) == -1", "request.user.lastIndexOf('a') == 0", "request.user.replace('a', 'b') == 'blice'",
        "request.user.replace('l', 'L', 1) == 'aLice'", "request.user.split('i') == ['al', 'ce']", "request.user.split('', 2).size() == 2",
        "request.user.substring(1) == 'lice'", "request.user.substring(1, 3) == 'li'", "request.user.substring(4, 2) == ''",
        "request.user.substring(10) == ''", "'  x '.trim() == 'x'", "request.groups.join(',') == 'group1,group2'",
        "request.groups.join() == 'group1group2'", "'%s-%d'.format([request.user, 3]) == 'alice-3'",
        "'%v'.format([request.groups]) != ''", "strings.quote(request.user) == '\"alice\"'", "request.user.reverse() == 'ecila'",
        "request.user.startsWith('al')", "request.user.endsWith('ce')", "request.user.contains('lic')",
        "request.user.matches('^a.*e$')", "request.user.matches('[')", "matches(request.user, 'li')",
        "request.user.size() == 5", "size(request.user) == 5", "request.user + '-x' == 'alice-x'",
        "request.user < 'bob'", "request.user >= 'alice'", "'ü'.size() == 1", "'\\u00fc' == 'ü'", "r'\\d' == '\\\\d'",
        "b'abc'.size() == 3", "string(b'abc') == 'abc'", "bytes('abc') == b'abc'", "'a\\tb'.size() == 3",
        "'''multi\nline'''.size() > 0", "request.user.find('l.c') == 'lic'", "request.user.find('z') == ''",
        "request.user.findAll('[aeiou]') == ['a', 'i', 'e']", "request.user.findAll('[aeiou]', 2) == ['a', 'i']",
        "request.user.findAll('[aeiou]', 0) == []", "request.user.find('(') == ''", "'aaa'.findAll('a', -1).size() == 3",
        "request.user.lowerAscii().upperAscii() == 'ALICE'"]
for e in strs:
    for r in ["alice", "unicode"]:
        add("strings", e, r)

# Kubernetes lists, sets.
lists = ["[1, 2, 3].isSorted()", "[3, 1].isSorted()", "['a', 'b'].isSorted()", "[].isSorted()", "[1, 2, 3].sum() == 6",
         "[1.5, 2.5].sum() == 4.0", "[1u, 2u].sum() == 3u", "[].sum() == 0", "[duration('1s'), duration('2s')].sum() == duration('3s')",
         "[3, 1, 2].min() == 1", "[3, 1, 2].max() == 3", "['b', 'a'].min() == 'a'", "[].min() == 0", "[].max() == 0",
         "[1, 2, 1].indexOf(1) == 0", "[1, 2, 1].lastIndexOf(1) == 2", "[1, 2].indexOf(5) == -1", "request.groups.indexOf('group2') == 1",
         "request.groups.isSorted()", "request.groups.min() == 'group1'", "request.groups.max() == 'group2'",
         "request.groups.lastIndexOf('group1') == 0", "sets.contains(request.groups, ['group1'])", "sets.contains([1, 2], [3])",
         "sets.contains([], [])", "sets.equivalent([1, 2], [2, 1, 1])", "sets.equivalent(request.groups, ['group2', 'group1'])",
         "sets.intersects(request.groups, ['x', 'group2'])", "sets.intersects([], [1])", "sets.contains([1], ['a'])",
         "[1, 2] + [3] == [1, 2, 3]", "[1, 2] == [1, 2]", "[1, 2] != [2, 1]", "{'a': 1} == {'a': 1}", "2 in [1, 2]",
         "'a' in {'a': 1}", "[1, 2][1] == 2", "[1, 2][2] == 2", "[1, 2][-1] == 2", "{'a': 1}['b'] == 1", "[1, 2].size() == 2",
         "size([1]) == 1", "[[1, 2], [3]][0][1] == 2", "{'a': {'b': 'c'}}.a.b == 'c'", "{'a': 1, 'a': 2}['a'] == 2"]
for e in lists:
    for r in ["alice"]:
        add("lists", e, r)

# Numbers, conversions, time.
nums = ["1 + 2 == 3", "9223372036854775807 + 1 > 0", "-9223372036854775808 - 1 < 0", "9223372036854775807 * 2 > 0",
        "1 / 0 == 0", "1 % 0 == 0", "5 / 2 == 2", "-5 / 2 == -2", "-5 % 3 == -2", "5.0 / 0.0 > 1.0", "1u - 2u == 0u",
        "18446744073709551615u + 1u > 0u", "1 == 1u", "1 == 1.0", "1 < 1.5", "2u > 1", "1.0 == 1u", "int('12') == 12",
        "int('x') == 1", "uint(-1) == 0u", "int(1e20) == 0", "int(2.9) == 2", "double('1.5') == 1.5", "string(12) == '12'",
        "string(1.5) == '1.5'", "string(true) == 'true'", "bool('true')", "bool('yes')", "int(-9223372036854775808) < 0",
        "-(-9223372036854775808) > 0", "dyn(1) == dyn(1.0)", "dyn(1) == dyn('1')", "0.1 + 0.2 == 0.3", "1e3 == 1000.0",
        "0x10 == 16", "1 < 'a'", "type(1u) == uint", "type(1.0) == double", "type(null) == null_type", "type(type(1)) == type",
        "timestamp('2024-01-01T00:00:00Z') < timestamp('2025-01-01T00:00:00Z')",
        "timestamp('2024-01-01T00:00:00Z') + duration('1h') == timestamp('2024-01-01T01:00:00Z')",
        "timestamp('2024-01-02T00:00:00Z') - timestamp('2024-01-01T00:00:00Z') == duration('24h')",
        "timestamp('2024-03-10T12:30:45.123Z').getHours() == 12", "timestamp('2024-03-10T12:30:45.123Z').getMinutes() == 30",
        "timestamp('2024-03-10T12:30:45.123Z').getSeconds() == 45", "timestamp('2024-03-10T12:30:45.123Z').getMilliseconds() == 123",
        "timestamp('2024-03-10T12:30:45Z').getFullYear() == 2024", "timestamp('2024-03-10T12:30:45Z').getMonth() == 2",
        "timestamp('2024-03-10T12:30:45Z').getDate() == 10", "timestamp('2024-03-10T12:30:45Z').getDayOfMonth() == 9",
        "timestamp('2024-03-10T12:30:45Z').getDayOfWeek() == 0", "timestamp('2024-03-10T12:30:45Z').getDayOfYear() == 69",
        "timestamp('2024-03-10T12:30:45Z').getHours('America/New_York') == 8", "timestamp('2024-03-10T12:30:45Z').getHours('Asia/Kolkata') == 18",
        "timestamp('2024-03-10T12:30:45Z').getHours('+02:00') == 14", "timestamp('2024-03-10T12:30:45Z').getHours('Nope/Zone') == 1",
        "timestamp('not a time') < timestamp('2024-01-01T00:00:00Z')", "duration('1h30m') == duration('90m')",
        "duration('1h').getMinutes() == 60", "duration('1.5s').getMilliseconds() == 1500", "duration('x') == duration('1s')",
        "duration('-1s') < duration('0s')", "string(duration('90s')) == '90s'", "string(timestamp('2024-01-01T00:00:00Z')) == '2024-01-01T00:00:00Z'",
        "int(timestamp('1970-01-01T00:01:00Z')) == 60", "timestamp(0) == timestamp('1970-01-01T00:00:00Z')",
        "timestamp('9999-12-31T23:59:59Z') + duration('1h') > timestamp('2024-01-01T00:00:00Z')"]
for e in nums:
    add("numbers-time", e, "alice")

# Kubernetes libraries warrant does not offer, and other extensions.
unsupported = ["url('https://example.com').getHost() == 'example.com'", "isURL('https://x')", "ip('10.0.0.1').family() == 4",
               "isIP('10.0.0.1')", "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", "isCIDR('10.0.0.0/8')",
               "quantity('1Gi').isGreaterThan(quantity('1Mi'))", "isQuantity('1Gi')", "semver('1.2.3').major() == 1",
               "isSemver('1.2.3')", "format.dns1123Label().validate('abc').hasValue()", "[1, 2].all(i, v, v > i)",
               "{'a': 1}.exists(k, v, v == 1)", "[1, 2].transformList(i, v, v * 2) == [2, 4]", "[3, 1].sort() == [1, 3]",
               "[1, 1].distinct() == [1]", "[[1], [2]].flatten() == [1, 2]", "lists.range(3) == [0, 1, 2]",
               "[1, 2, 3].slice(1, 2) == [2]", "[1, 2].first().value() == 1", "base64.encode(b'a') == 'YQ=='",
               "math.greatest(1, 2) == 2", "authorizer.path('/x').check('get').allowed()", "request.user.nope()", "nope(1)",
               "strings.nope('a')", "[1, 2].sortBy(x, -x) == [2, 1]", "'abc'.reverse() == 'cba'"]
for e in unsupported:
    add("unsupported", e, "alice")

# Syntax and size limits.
syntax = ["request.user ==", "(request.user == 'a'", "request.user == 'a')", "request..user == 'a'", "'unterminated",
          "request.user == \"a\"", "request.user == 'a' ||| true", "1 +", "[1, 2", "{'a': 1", "has(request)",
          "has(1)", "request.user.()", "in == 1", "request.user == 'a' && ", "!", "``", "a.b.c.d == 1",
          "request.user == 'a' " + "&& request.uid != 'x' " * 40, "(" * 30 + "true" + ")" * 30,
          "[" * 20 + "1" + "]" * 20 + " == " + "[" * 20 + "1" + "]" * 20, "!" * 50 + "true",
          " || ".join(["request.user == 'u%d'" % i for i in range(150)]),
          "request.groups.all(a, request.groups.all(b, request.groups.all(c, a + b + c != '')))",
          "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a > 0))))))",
          "request.groups.all(a, request.groups.all(b, a != '' && b != ''))",
          "request.groups.map(a, request.groups.map(b, a + b)).size() > 0"]
for e in syntax:
    for r in ["alice", "many-groups"]:
        add("syntax-limits", e, r)

# Realistic authorization rules.
rules = ["!('system:masters' in request.groups)", "!request.user.startsWith('system:node:')",
         "!(request.user in ['system:kube-controller-manager', 'system:kube-scheduler'])",
         "request.user != 'system:serviceaccount:warrant-system:warrant'",
         "has(request.resourceAttributes) && request.resourceAttributes.verb in ['delete', 'deletecollection']",
         "has(request.resourceAttributes) && (request.resourceAttributes.namespace in ['production', 'payments'] || (request.resourceAttributes.resource == 'namespaces' && request.resourceAttributes.name in ['production', 'payments']))",
         "request.user.startsWith('system:serviceaccount:ci:')",
         "'system:serviceaccounts:ci' in request.groups && request.resourceAttributes.namespace.startsWith('test-')",
         "request.extra[?'warrant.dev/ticket'].orValue([]).exists(t, t.matches('^CHG-[0-9]+$'))",
         "request.?resourceAttributes.resource.orValue('') == 'secrets' && request.?resourceAttributes.verb.orValue('') in ['list', 'watch']",
         "has(request.resourceAttributes) && request.resourceAttributes.subresource in ['exec', 'attach', 'portforward']",
         "has(request.nonResourceAttributes) && request.nonResourceAttributes.path.startsWith('/metrics')",
         "request.groups.exists(g, g.startsWith('team-') && has(request.resourceAttributes) && request.resourceAttributes.namespace == g.substring(5))",
         "request.user.split(':').size() == 4 && request.user.split(':')[2] == 'ci'",
         "request.extra.exists(k, k.startsWith('authentication.kubernetes.io/'))",
         "has(request.resourceAttributes) && request.resourceAttributes.group == '' && request.resourceAttributes.resource == 'pods'",
         "has(request.resourceAttributes) && request.resourceAttributes.version in ['v1', 'v1beta1']",
         "request.uid != '' && request.uid.size() < 64",
         "request.groups.size() < 100",
         "has(request.resourceAttributes) && request.resourceAttributes.name == '' && request.resourceAttributes.verb == 'list'"]
for e in rules:
    for r in ALL:
        add("rules", e, r)

# Found in review: formatting, offsets, literal checks, growth, odd input.
findings = ["string(1e20) == '1e+20'", "string(123456789.0) == '1.23456789e+08'", "string(0.000001) == '1e-06'",
            "string(1.5) == '1.5'", "string(100000.0) == '100000'", "'%s'.format([1.0/0.0]) == '+Inf'",
            "'%s'.format([['a','b']]) == '[\"a\", \"b\"]'", "'%e'.format([1.0]) == '1.000000e+00'",
            "'%d'.format([1.5]) == '1.5'", "'%f'.format([1]) == '1.000000'", "'%s'.format(['a','b']) == 'a'",
            "'%s'.format([request.user]) == 'alice'", "'%d'.format([3]) == '3'", "'%.2f'.format([1.005]) != ''",
            "'abc'.indexOf('c', 5) == -1", "'abc'.lastIndexOf('a', 5) == -1", "'abc'.indexOf('', 3) == 3",
            "{?'a': 1}.size() == 1", "[1, dyn('a')].size() == 2", "request.user.matches('a{1001}')",
            "request.user.matches('a{2,1000}') || true", "int(duration('1s')) == 1", "{1: 'a'}.foo == 'a'",
            "type(optional.none()) == optional_type",
            "'aaaaaaaaaa'" + ".replace('a', 'aaaaaaaaaa')" * 8 + ".size() > 0",
            "request.user == 'alice' // für alice",
            "request" + ".a" * 3000 + " == 'x'"]
for e in findings:
    add("review-findings", e, "alice")

def q(s):
    return json.dumps(s, ensure_ascii=False)

out = ["# The differential CEL corpus: (expression, review) pairs judged by warrant and by",
       "# Kubernetes' authorization CEL. Generated by gen_corpus.py; edit that and rerun.",
       "reviews:"]
for name, spec in REVIEWS.items():
    out.append(f"  {name}: {json.dumps(spec, ensure_ascii=False)}")
out.append("cases:")
for c in cases:
    out.append(f"  - id: {q(c['id'])}")
    out.append(f"    expression: {q(c['expression'])}")
    out.append(f"    review: {c['review']}")
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.yaml")
with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(out) + "\n")
print(f"{len(cases)} cases, {len(REVIEWS)} reviews -> {path}")

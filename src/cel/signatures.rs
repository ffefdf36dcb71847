//! The signatures of every operator and function warrant's CEL environment offers, for the
//! checker: cel-go's standard declarations, the strings extension (version 2, as
//! kube-apiserver configures it), optional types, sets, and the Kubernetes list and regex
//! libraries (`k8s.io/apiserver/pkg/cel/library`). Functions Kubernetes has and warrant does
//! not are listed too, so that using one fails at load time with a message naming it.

use super::types::Ty;

/// A parameter or result pattern. `A` and `B` are type parameters bound by the arguments.
#[derive(Debug)]
enum P {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Ts,
    Dur,
    Type,
    Dyn,
    A,
    B,
    List(&'static P),
    Map(&'static P, &'static P),
    Opt(&'static P),
}

/// One overload: receiver (for a member function), parameters, result.
#[derive(Debug)]
struct Sig(Option<P>, &'static [P], P);

/// What the checker learns about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// An overload matches; the call has this type.
    Ok(Ty),
    /// The function exists but no overload takes these types.
    NoOverload,
    /// No function of that name exists.
    Unknown,
    /// Kubernetes has the function and warrant does not; the text says what to do instead.
    Unsupported(&'static str),
}

/// Resolves a call of `name` on `target` (for a member call) with arguments of types `args`.
pub(crate) fn resolve(name: &str, target: Option<&Ty>, args: &[Ty]) -> Resolution {
    if let Some(why) = unsupported(name, target.is_some(), args.len()) {
        return Resolution::Unsupported(why);
    }
    let Some(sigs) = table(name) else {
        return Resolution::Unknown;
    };
    let mut result: Option<Ty> = None;
    for Sig(recv, params, out) in sigs {
        if recv.is_some() != target.is_some() || params.len() != args.len() {
            continue;
        }
        let mut bind = Bindings::default();
        let recv_ok = match (recv, target) {
            (Some(p), Some(t)) => bind.matches(p, t),
            _ => true,
        };
        if recv_ok && params.iter().zip(args).all(|(p, t)| bind.matches(p, t)) {
            let t = bind.instantiate(out);
            result = Some(match result {
                None => t,
                Some(prev) if prev == t => prev,
                Some(_) => Ty::Dyn,
            });
        }
    }
    match result {
        Some(t) => Resolution::Ok(t),
        None => Resolution::NoOverload,
    }
}

#[derive(Default)]
struct Bindings {
    a: Option<Ty>,
    b: Option<Ty>,
}

impl Bindings {
    fn matches(&mut self, p: &P, t: &Ty) -> bool {
        match (p, t) {
            (P::A, t) => bind(&mut self.a, t),
            (P::B, t) => bind(&mut self.b, t),
            (P::Dyn, _) | (_, Ty::Dyn) => true,
            (P::Bool, Ty::Bool)
            | (P::Int, Ty::Int)
            | (P::Uint, Ty::Uint)
            | (P::Double, Ty::Double)
            | (P::String, Ty::String)
            | (P::Bytes, Ty::Bytes)
            | (P::Ts, Ty::Timestamp)
            | (P::Dur, Ty::Duration)
            | (P::Type, Ty::Type) => true,
            (P::List(p), Ty::List(t)) | (P::Opt(p), Ty::Optional(t)) => self.matches(p, t),
            (P::Map(pk, pv), Ty::Map(k, v)) => self.matches(pk, k) && self.matches(pv, v),
            _ => false,
        }
    }

    fn instantiate(&self, p: &P) -> Ty {
        match p {
            P::Bool => Ty::Bool,
            P::Int => Ty::Int,
            P::Uint => Ty::Uint,
            P::Double => Ty::Double,
            P::String => Ty::String,
            P::Bytes => Ty::Bytes,
            P::Ts => Ty::Timestamp,
            P::Dur => Ty::Duration,
            P::Type => Ty::Type,
            P::Dyn => Ty::Dyn,
            P::A => self.a.clone().unwrap_or(Ty::Dyn),
            P::B => self.b.clone().unwrap_or(Ty::Dyn),
            P::List(p) => Ty::list(self.instantiate(p)),
            P::Map(k, v) => Ty::map(self.instantiate(k), self.instantiate(v)),
            P::Opt(p) => Ty::optional(self.instantiate(p)),
        }
    }
}

/// Binds a type parameter, or checks a bound one; `dyn` and null are absorbed.
fn bind(slot: &mut Option<Ty>, t: &Ty) -> bool {
    match slot {
        None => {
            *slot = Some(t.clone());
            true
        }
        Some(bound) if bound.compatible(t) => {
            *slot = Some(bound.join(t));
            true
        }
        // null is assignable to declared object types and optionals, as in cel-go.
        Some(Ty::Object(_) | Ty::Optional(_)) if *t == Ty::Null => true,
        Some(Ty::Null) if matches!(t, Ty::Object(_) | Ty::Optional(_)) => {
            *slot = Some(t.clone());
            true
        }
        Some(_) => false,
    }
}

/// Whether `name` is a known global function, offered or not (for namespaced names).
pub(crate) fn is_global(name: &str) -> bool {
    table(name).is_some() || unsupported(name, false, 0).is_some()
}

/// Functions of the Kubernetes CEL environment that warrant does not offer.
pub(crate) fn unsupported(name: &str, member: bool, arity: usize) -> Option<&'static str> {
    Some(match name {
        "url" | "isURL" | "getScheme" | "getHost" | "getHostname" | "getPort"
        | "getEscapedPath" | "getQuery" => "the Kubernetes URL library is not available",
        "quantity" | "isQuantity" | "compareTo" | "asInteger" | "asApproximateFloat"
        | "isInteger" | "sign" | "add" | "sub" | "isGreaterThan" | "isLessThan" => {
            "the Kubernetes quantity library is not available"
        }
        "semver" | "isSemver" | "major" | "minor" | "patch" => {
            "the Kubernetes semver library is not available"
        }
        "ip"
        | "isIP"
        | "cidr"
        | "isCIDR"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "containsIP"
        | "containsCIDR"
        | "prefixLength"
        | "masked" => {
            "the Kubernetes IP and CIDR library is not available; compare strings instead"
        }
        "format.dns1123Label" | "format.dns1123Subdomain" | "format.named" | "validate" => {
            "the Kubernetes format library is not available"
        }
        "transformList" | "transformMap" | "transformMapEntry" => {
            "two-variable comprehensions are not available"
        }
        "all" | "exists" | "existsOne" | "exists_one" if member && arity == 3 => {
            "two-variable comprehensions are not available"
        }
        "slice" | "flatten" | "distinct" | "sort" | "sortBy" | "lists.range" | "first" | "last" => {
            "the cel-go lists extension is not available"
        }
        "authorizer" | "path" | "group" | "serviceAccount" | "resource" | "subresource"
        | "namespace" | "name" | "check" | "allowed" | "reason" | "errored" | "error"
        | "fieldSelector" | "labelSelector" => {
            "the Kubernetes authz library needs an `authorizer` variable, which authorization CEL does not bind"
        }
        _ => return None,
    })
}

use P::*;

const NUMERIC_SAME: &[Sig] = &[
    Sig(None, &[Int, Int], Int),
    Sig(None, &[Uint, Uint], Uint),
    Sig(None, &[Double, Double], Double),
];

const ORDERING: &[Sig] = &[
    Sig(None, &[Bool, Bool], Bool),
    Sig(None, &[Int, Int], Bool),
    Sig(None, &[Uint, Uint], Bool),
    Sig(None, &[Double, Double], Bool),
    Sig(None, &[String, String], Bool),
    Sig(None, &[Bytes, Bytes], Bool),
    Sig(None, &[Ts, Ts], Bool),
    Sig(None, &[Dur, Dur], Bool),
    // Kubernetes enables cross-type numeric comparisons.
    Sig(None, &[Int, Uint], Bool),
    Sig(None, &[Int, Double], Bool),
    Sig(None, &[Uint, Int], Bool),
    Sig(None, &[Uint, Double], Bool),
    Sig(None, &[Double, Int], Bool),
    Sig(None, &[Double, Uint], Bool),
];

const TS_GETTER: &[Sig] = &[Sig(Some(Ts), &[], Int), Sig(Some(Ts), &[String], Int)];

const TS_DUR_GETTER: &[Sig] = &[
    Sig(Some(Ts), &[], Int),
    Sig(Some(Ts), &[String], Int),
    Sig(Some(Dur), &[], Int),
];

const SET_FN: &[Sig] = &[Sig(None, &[List(&A), List(&A)], Bool)];

const SUM_MIN_MAX: &[Sig] = &[
    Sig(Some(List(&Int)), &[], Int),
    Sig(Some(List(&Uint)), &[], Uint),
    Sig(Some(List(&Double)), &[], Double),
    Sig(Some(List(&Dur)), &[], Dur),
];

const ORDERED_ELEMENT: &[Sig] = &[
    Sig(Some(List(&Int)), &[], Int),
    Sig(Some(List(&Uint)), &[], Uint),
    Sig(Some(List(&Double)), &[], Double),
    Sig(Some(List(&String)), &[], String),
    Sig(Some(List(&Bytes)), &[], Bytes),
    Sig(Some(List(&Bool)), &[], Bool),
    Sig(Some(List(&Ts)), &[], Ts),
    Sig(Some(List(&Dur)), &[], Dur),
];

const INDEX_OF: &[Sig] = &[
    Sig(Some(String), &[String], Int),
    Sig(Some(String), &[String, Int], Int),
    Sig(Some(List(&A)), &[A], Int),
];

/// The overloads of `name`, if warrant has such a function.
fn table(name: &str) -> Option<&'static [Sig]> {
    Some(match name {
        "!_" => &[Sig(None, &[Bool], Bool)],
        "-_" => &[Sig(None, &[Int], Int), Sig(None, &[Double], Double)],
        "_&&_" | "_||_" => &[Sig(None, &[Bool, Bool], Bool)],
        "@not_strictly_false" => &[Sig(None, &[Bool], Bool)],
        "_==_" | "_!=_" => &[Sig(None, &[A, A], Bool)],
        "_<_" | "_<=_" | "_>_" | "_>=_" => ORDERING,
        "_+_" => &[
            Sig(None, &[Int, Int], Int),
            Sig(None, &[Uint, Uint], Uint),
            Sig(None, &[Double, Double], Double),
            Sig(None, &[String, String], String),
            Sig(None, &[Bytes, Bytes], Bytes),
            Sig(None, &[List(&A), List(&A)], List(&A)),
            Sig(None, &[Ts, Dur], Ts),
            Sig(None, &[Dur, Ts], Ts),
            Sig(None, &[Dur, Dur], Dur),
        ],
        "_-_" => &[
            Sig(None, &[Int, Int], Int),
            Sig(None, &[Uint, Uint], Uint),
            Sig(None, &[Double, Double], Double),
            Sig(None, &[Ts, Ts], Dur),
            Sig(None, &[Ts, Dur], Ts),
            Sig(None, &[Dur, Dur], Dur),
        ],
        "_*_" | "_/_" => NUMERIC_SAME,
        "_%_" => &[Sig(None, &[Int, Int], Int), Sig(None, &[Uint, Uint], Uint)],
        "_[_]" => &[
            Sig(None, &[List(&A), Int], A),
            Sig(None, &[Map(&A, &B), A], B),
        ],
        "_[?_]" => &[
            Sig(None, &[List(&A), Int], Opt(&A)),
            Sig(None, &[Map(&A, &B), A], Opt(&B)),
            Sig(None, &[Opt(&List(&A)), Int], Opt(&A)),
            Sig(None, &[Opt(&Map(&A, &B)), A], Opt(&B)),
        ],
        "@in" => &[
            Sig(None, &[A, List(&A)], Bool),
            Sig(None, &[A, Map(&A, &B)], Bool),
        ],
        "size" => &[
            Sig(None, &[String], Int),
            Sig(None, &[Bytes], Int),
            Sig(None, &[List(&A)], Int),
            Sig(None, &[Map(&A, &B)], Int),
            Sig(Some(String), &[], Int),
            Sig(Some(Bytes), &[], Int),
            Sig(Some(List(&A)), &[], Int),
            Sig(Some(Map(&A, &B)), &[], Int),
        ],
        "contains" | "startsWith" | "endsWith" => &[Sig(Some(String), &[String], Bool)],
        "matches" => &[
            Sig(Some(String), &[String], Bool),
            Sig(None, &[String, String], Bool),
        ],
        "int" => &[
            Sig(None, &[Int], Int),
            Sig(None, &[Uint], Int),
            Sig(None, &[Double], Int),
            Sig(None, &[String], Int),
            Sig(None, &[Ts], Int),
        ],
        "uint" => &[
            Sig(None, &[Int], Uint),
            Sig(None, &[Uint], Uint),
            Sig(None, &[Double], Uint),
            Sig(None, &[String], Uint),
        ],
        "double" => &[
            Sig(None, &[Int], Double),
            Sig(None, &[Uint], Double),
            Sig(None, &[Double], Double),
            Sig(None, &[String], Double),
        ],
        "string" => &[
            Sig(None, &[Int], String),
            Sig(None, &[Uint], String),
            Sig(None, &[Double], String),
            Sig(None, &[String], String),
            Sig(None, &[Bytes], String),
            Sig(None, &[Bool], String),
            Sig(None, &[Ts], String),
            Sig(None, &[Dur], String),
        ],
        "bytes" => &[Sig(None, &[String], Bytes), Sig(None, &[Bytes], Bytes)],
        "bool" => &[Sig(None, &[Bool], Bool), Sig(None, &[String], Bool)],
        "timestamp" => &[Sig(None, &[String], Ts), Sig(None, &[Ts], Ts)],
        "duration" => &[Sig(None, &[String], Dur), Sig(None, &[Dur], Dur)],
        "dyn" => &[Sig(None, &[A], Dyn)],
        "type" => &[Sig(None, &[A], Type)],
        "getFullYear" | "getMonth" | "getDate" | "getDayOfMonth" | "getDayOfWeek"
        | "getDayOfYear" => TS_GETTER,
        "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds" => TS_DUR_GETTER,
        // Strings extension, version 2.
        "charAt" => &[Sig(Some(String), &[Int], String)],
        "indexOf" | "lastIndexOf" => INDEX_OF,
        "lowerAscii" | "upperAscii" | "trim" => &[Sig(Some(String), &[], String)],
        "replace" => &[
            Sig(Some(String), &[String, String], String),
            Sig(Some(String), &[String, String, Int], String),
        ],
        "split" => &[
            Sig(Some(String), &[String], List(&String)),
            Sig(Some(String), &[String, Int], List(&String)),
        ],
        "substring" => &[
            Sig(Some(String), &[Int], String),
            Sig(Some(String), &[Int, Int], String),
        ],
        "join" => &[
            Sig(Some(List(&String)), &[], String),
            Sig(Some(List(&String)), &[String], String),
        ],
        "format" => &[Sig(Some(String), &[List(&Dyn)], String)],
        "strings.quote" => &[Sig(None, &[String], String)],
        // Optional types.
        "optional.of" | "optional.ofNonZeroValue" => &[Sig(None, &[A], Opt(&A))],
        "optional.none" => &[Sig(None, &[], Opt(&Dyn))],
        "hasValue" => &[Sig(Some(Opt(&A)), &[], Bool)],
        "value" => &[Sig(Some(Opt(&A)), &[], A)],
        "orValue" => &[Sig(Some(Opt(&A)), &[A], A)],
        "or" => &[Sig(Some(Opt(&A)), &[Opt(&A)], Opt(&A))],
        // Sets extension.
        "sets.contains" | "sets.equivalent" | "sets.intersects" => SET_FN,
        // Kubernetes lists library.
        "isSorted" => &[
            Sig(Some(List(&Int)), &[], Bool),
            Sig(Some(List(&Uint)), &[], Bool),
            Sig(Some(List(&Double)), &[], Bool),
            Sig(Some(List(&String)), &[], Bool),
            Sig(Some(List(&Bytes)), &[], Bool),
            Sig(Some(List(&Bool)), &[], Bool),
            Sig(Some(List(&Ts)), &[], Bool),
            Sig(Some(List(&Dur)), &[], Bool),
        ],
        "sum" => SUM_MIN_MAX,
        "min" | "max" => ORDERED_ELEMENT,
        // Kubernetes regex library.
        "find" => &[Sig(Some(String), &[String], String)],
        "findAll" => &[
            Sig(Some(String), &[String], List(&String)),
            Sig(Some(String), &[String, Int], List(&String)),
        ],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_needs_one_type_unless_dynamic() {
        assert_eq!(
            resolve("_==_", None, &[Ty::String, Ty::Int]),
            Resolution::NoOverload
        );
        assert_eq!(
            resolve("_==_", None, &[Ty::String, Ty::Dyn]),
            Resolution::Ok(Ty::Bool)
        );
        assert_eq!(
            resolve("_<_", None, &[Ty::Int, Ty::Double]),
            Resolution::Ok(Ty::Bool)
        );
    }

    #[test]
    fn generic_results_are_instantiated() {
        assert_eq!(
            resolve("_[_]", None, &[Ty::list(Ty::String), Ty::Int]),
            Resolution::Ok(Ty::String)
        );
        assert_eq!(
            resolve(
                "orValue",
                Some(&Ty::optional(Ty::list(Ty::Dyn))),
                &[Ty::list(Ty::String)]
            ),
            Resolution::Ok(Ty::list(Ty::String))
        );
        assert_eq!(
            resolve("indexOf", Some(&Ty::list(Ty::Int)), &[Ty::Int]),
            Resolution::Ok(Ty::Int)
        );
    }

    #[test]
    fn unknown_and_unsupported_differ() {
        assert_eq!(resolve("nope", None, &[]), Resolution::Unknown);
        assert!(matches!(
            resolve("url", None, &[Ty::String]),
            Resolution::Unsupported(_)
        ));
    }
}

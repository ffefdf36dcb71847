//! Request URIs as kube-apiserver's request-info factory reads them.

use super::*;

#[test]
fn paths_and_queries_are_decoded_as_go_decodes_them() {
    let u = RequestUri::parse(
        "/api/v1/namespaces/a%20b/pods?labelSelector=app%3Dweb%2Ctier+in+%28x%29&limit=500&labelSelector=second",
    );
    assert_eq!(u.path, "/api/v1/namespaces/a b/pods");
    assert_eq!(
        u.param("labelSelector").as_deref(),
        Some("app=web,tier in (x)")
    );
    assert_eq!(u.param("limit").as_deref(), Some("500"));
    assert_eq!(u.param("fieldSelector"), None);
    // A malformed escape stays as written.
    assert_eq!(RequestUri::parse("/healthz%zz%4").path, "/healthz%zz%4");
    assert_eq!(RequestUri::parse("/version").query, "");
}

#[test]
fn resource_paths_as_the_request_info_factory_reads_them() {
    let p = |s| resource_path(s);
    assert_eq!(
        p("/api/v1/namespaces/shop/pods/web-1/log"),
        Some(ResourcePath {
            namespace: "shop",
            resource: "pods",
            name: "web-1",
            subresource: "log",
            verb_in_path: false
        })
    );
    assert_eq!(
        p("/apis/apps/v1/namespaces/shop/deployments"),
        Some(ResourcePath {
            namespace: "shop",
            resource: "deployments",
            ..Default::default()
        })
    );
    // The namespaces resource: the name is also the namespace; status stays a subresource.
    assert_eq!(
        p("/api/v1/namespaces/shop"),
        Some(ResourcePath {
            namespace: "shop",
            resource: "namespaces",
            name: "shop",
            ..Default::default()
        })
    );
    assert_eq!(
        p("/api/v1/namespaces/shop/finalize"),
        Some(ResourcePath {
            namespace: "shop",
            resource: "namespaces",
            name: "shop",
            subresource: "finalize",
            verb_in_path: false
        })
    );
    assert_eq!(
        p("/api/v1/namespaces"),
        Some(ResourcePath {
            resource: "namespaces",
            ..Default::default()
        })
    );
    // The deprecated verb-in-path forms; proxy takes no subresource.
    assert_eq!(
        p("/api/v1/watch/namespaces/shop/pods"),
        Some(ResourcePath {
            namespace: "shop",
            resource: "pods",
            verb_in_path: true,
            ..Default::default()
        })
    );
    assert_eq!(
        p("/api/v1/proxy/namespaces/shop/services/web/metrics"),
        Some(ResourcePath {
            namespace: "shop",
            resource: "services",
            name: "web",
            verb_in_path: true,
            ..Default::default()
        })
    );
    // Non-resource paths.
    for path in [
        "/healthz",
        "/api",
        "/api/v1",
        "/apis/apps/v1",
        "/openapi/v3/apis",
        "/",
    ] {
        assert_eq!(p(path), None, "{path}");
    }
}

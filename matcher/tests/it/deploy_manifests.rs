//! The Kubernetes manifests under `deploy/`, checked without a cluster:
//! every YAML document parses (yaml-rust2) and has an apiVersion, a kind
//! and a name, and the manifests agree with each other and with the
//! programs' command lines. The Fleet's game port is `netcode`, UDP,
//! Dynamic, the container port the server binds, and it declares the
//! players list the server fills; every secret a pod mounts is declared,
//! with the keys the container's arguments read through the mount; the
//! matcher and the game servers share the netcode
//! key and the protocol id; the matcher's allocator options name the
//! Fleet's namespace, label and port; the Service selects the
//! Deployment's pods on a port the container declares; and the declared
//! secrets carry no values (real ones are made at deploy time).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Parser;
use netcode_matcher::Options;
use yaml_rust2::{Yaml, YamlLoader};

/// One parsed document and the file it came from.
struct Document {
    file: String,
    yaml: Yaml,
}

impl Document {
    fn kind(&self) -> &str {
        self.yaml["kind"].as_str().unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.yaml["metadata"]["name"].as_str().unwrap_or_default()
    }

    /// Its namespace, `default` when it names none.
    fn namespace(&self) -> &str {
        self.yaml["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
    }
}

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// Every `.yaml`/`.yml` file under `dir`, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every document of every manifest, each checked for an apiVersion, a
/// kind and a name.
fn documents() -> Vec<Document> {
    let files = yaml_files(&deploy_dir());
    assert!(files.len() >= 3, "manifests under deploy/: {files:?}");
    let mut documents = Vec::new();
    for path in files {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed =
            YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file}: not YAML: {e}"));
        for yaml in parsed.into_iter().filter(|doc| !doc.is_null()) {
            for (field, value) in [
                ("apiVersion", &yaml["apiVersion"]),
                ("kind", &yaml["kind"]),
                ("metadata.name", &yaml["metadata"]["name"]),
            ] {
                assert!(
                    value.as_str().is_some_and(|v| !v.is_empty()),
                    "{file}: a document without {field}: {yaml:?}"
                );
            }
            documents.push(Document {
                file: file.clone(),
                yaml,
            });
        }
    }
    documents
}

/// The one document of `kind` (panics unless there is exactly one).
fn only<'a>(documents: &'a [Document], kind: &str) -> &'a Document {
    let found: Vec<&Document> = documents.iter().filter(|d| d.kind() == kind).collect();
    assert_eq!(found.len(), 1, "one {kind} expected");
    found[0]
}

/// The items of a sequence (none if it is absent).
fn items(yaml: &Yaml) -> &[Yaml] {
    yaml.as_vec().map(Vec::as_slice).unwrap_or_default()
}

/// A mapping of strings to strings, e.g. labels.
fn strings(yaml: &Yaml) -> BTreeMap<String, String> {
    yaml.as_hash()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let text = |y: &Yaml| y.as_str().map(str::to_owned);
            (
                text(k).unwrap_or_else(|| panic!("key {k:?} not a string")),
                text(v).unwrap_or_else(|| panic!("value of {k:?} not a string")),
            )
        })
        .collect()
}

/// A container's arguments: all strings (an unquoted number would be
/// refused by Kubernetes), as a flag → values map (`--flag value` and
/// `--flag=value`; a flag without a value maps to nothing).
fn arguments(container: &Yaml) -> BTreeMap<String, Vec<String>> {
    let args: Vec<&str> = items(&container["args"])
        .iter()
        .map(|a| {
            a.as_str()
                .unwrap_or_else(|| panic!("argument {a:?} is not a string"))
        })
        .collect();
    let mut flags: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        assert!(arg.starts_with("--"), "{arg:?} is not a flag");
        if let Some((flag, value)) = arg.split_once('=') {
            flags.entry(flag.into()).or_default().push(value.into());
        } else if args.get(i + 1).is_some_and(|next| !next.starts_with("--")) {
            flags
                .entry(arg.into())
                .or_default()
                .push(args[i + 1].into());
            i += 1;
        } else {
            flags.entry(arg.into()).or_default();
        }
        i += 1;
    }
    flags
}

/// The single value of `flag`.
fn value<'a>(flags: &'a BTreeMap<String, Vec<String>>, flag: &str) -> &'a str {
    match flags.get(flag).map(Vec::as_slice) {
        Some([value]) => value,
        other => panic!("{flag}: one value expected, got {other:?}"),
    }
}

/// The secrets declared, by name, with the keys each holds.
fn secrets(documents: &[Document]) -> BTreeMap<String, Vec<String>> {
    documents
        .iter()
        .filter(|d| d.kind() == "Secret")
        .map(|d| {
            let mut keys: Vec<String> = strings(&d.yaml["stringData"]).into_keys().collect();
            keys.extend(strings(&d.yaml["data"]).into_keys());
            (d.name().to_owned(), keys)
        })
        .collect()
}

/// The secret and key a container reads at `path`, through its volume
/// mounts and the pod's secret volumes; panics if `path` is not a key of
/// a declared secret mounted in the container.
fn secret_file(
    pod: &Yaml,
    container: &Yaml,
    path: &str,
    declared: &BTreeMap<String, Vec<String>>,
) -> (String, String) {
    for mount in items(&container["volumeMounts"]) {
        let mount_path = mount["mountPath"].as_str().unwrap().trim_end_matches('/');
        let Some(file) = path
            .strip_prefix(mount_path)
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            continue;
        };
        let volume_name = mount["name"].as_str().unwrap();
        let volume = items(&pod["volumes"])
            .iter()
            .find(|v| v["name"].as_str() == Some(volume_name))
            .unwrap_or_else(|| panic!("volume {volume_name} is mounted but not declared"));
        let secret = volume["secret"]["secretName"]
            .as_str()
            .unwrap_or_else(|| panic!("volume {volume_name} is not a secret"));
        let keys = declared
            .get(secret)
            .unwrap_or_else(|| panic!("secret {secret} is mounted but not declared"));
        assert!(
            keys.iter().any(|k| k == file),
            "{path}: secret {secret} has no key {file:?} (keys: {keys:?})"
        );
        return (secret.to_owned(), file.to_owned());
    }
    panic!("{path} is under no volume mount of the container")
}

/// Every secret volume of `pod` names a declared secret.
fn check_secret_volumes(pod: &Yaml, declared: &BTreeMap<String, Vec<String>>, what: &str) {
    for volume in items(&pod["volumes"]) {
        if let Some(secret) = volume["secret"]["secretName"].as_str() {
            assert!(
                declared.contains_key(secret),
                "{what} mounts secret {secret}, which is not declared"
            );
        }
    }
}

/// The container named `name` of `pod`.
fn container<'a>(pod: &'a Yaml, name: &str) -> &'a Yaml {
    items(&pod["containers"])
        .iter()
        .find(|c| c["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no container {name}"))
}

#[test]
fn every_document_parses_and_is_named() {
    let documents = documents();
    for kind in ["Fleet", "Deployment", "Service", "ServiceAccount", "Secret"] {
        assert!(
            documents.iter().any(|d| d.kind() == kind),
            "no {kind} among the manifests"
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for d in &documents {
        assert!(
            seen.insert((
                d.kind().to_owned(),
                d.namespace().to_owned(),
                d.name().to_owned()
            )),
            "{}: {} {} declared twice",
            d.file,
            d.kind(),
            d.name()
        );
    }
}

#[test]
fn declared_secrets_hold_no_values() {
    let documents = documents();
    for secret in documents.iter().filter(|d| d.kind() == "Secret") {
        assert!(
            secret.yaml["data"].is_badvalue(),
            "{}: secret {} has data: use empty stringData placeholders",
            secret.file,
            secret.name()
        );
        for (key, value) in strings(&secret.yaml["stringData"]) {
            assert!(
                value.is_empty(),
                "{}: secret {} has a value for {key}: real values are made at deploy time",
                secret.file,
                secret.name()
            );
        }
    }
}

#[test]
fn the_fleet_serves_netcode_over_udp_on_a_dynamic_host_port() {
    let documents = documents();
    let declared = secrets(&documents);
    let fleet = only(&documents, "Fleet");
    assert_eq!(fleet.yaml["apiVersion"].as_str(), Some("agones.dev/v1"));
    let spec = &fleet.yaml["spec"]["template"]["spec"];
    let ports = items(&spec["ports"]);
    let port = ports
        .iter()
        .find(|p| p["name"].as_str() == Some("netcode"))
        .expect("a port named netcode");
    assert_eq!(port["protocol"].as_str(), Some("UDP"));
    assert_eq!(port["portPolicy"].as_str(), Some("Dynamic"));
    let container_port = port["containerPort"].as_i64().expect("a containerPort");

    let pod = &spec["template"]["spec"];
    let server_name = spec["container"]
        .as_str()
        .expect("the game container named");
    assert_eq!(port["container"].as_str(), Some(server_name));
    let server = container(pod, server_name);
    let health = &spec["health"];
    assert_ne!(health["disabled"].as_bool(), Some(true), "health checked");
    for field in ["initialDelaySeconds", "periodSeconds", "failureThreshold"] {
        assert!(
            health[field].as_i64().is_some_and(|n| n > 0),
            "health.{field}"
        );
    }

    let flags = arguments(server);
    let bind = value(&flags, "--bind");
    assert_eq!(bind, format!("0.0.0.0:{container_port}"));
    if flags.contains_key("--port-name") {
        assert_eq!(value(&flags, "--port-name"), "netcode");
    }
    let metrics = value(&flags, "--metrics");
    let metrics_port: i64 = metrics.rsplit(':').next().unwrap().parse().unwrap();
    assert!(
        items(&server["ports"])
            .iter()
            .any(|p| p["containerPort"].as_i64() == Some(metrics_port)),
        "the metrics port {metrics_port} is declared"
    );
    assert!(
        items(&server["ports"])
            .iter()
            .all(|p| p["containerPort"].as_i64() != Some(container_port)),
        "Agones adds the game port itself"
    );
    check_secret_volumes(pod, &declared, "the Fleet");
    secret_file(pod, server, value(&flags, "--key-file"), &declared);

    // The players list the server fills (its --players-list, `players` by
    // default; empty: none), with room for every slot.
    let list = match flags.get("--players-list").map(Vec::as_slice) {
        None => "players",
        Some([name]) => name.as_str(),
        other => panic!("--players-list: {other:?}"),
    };
    if !list.is_empty() {
        let slots: i64 = match flags.get("--max-clients").map(Vec::as_slice) {
            None => 64,
            Some([n]) => n.parse().expect("--max-clients N"),
            other => panic!("--max-clients: {other:?}"),
        };
        let capacity = spec["lists"][list]["capacity"].as_i64();
        assert!(
            capacity.is_some_and(|c| c >= slots),
            "the Fleet's list {list:?} holds {capacity:?} of {slots} players"
        );
    }
}

#[test]
fn the_matcher_allocates_from_the_fleet_with_the_shared_key() {
    let documents = documents();
    let declared = secrets(&documents);
    let fleet = only(&documents, "Fleet");
    let fleet_spec = &fleet.yaml["spec"]["template"]["spec"];
    let fleet_pod = &fleet_spec["template"]["spec"];
    let server = container(
        fleet_pod,
        fleet_spec["container"].as_str().unwrap_or_default(),
    );
    let server_flags = arguments(server);

    let deployment = only(&documents, "Deployment");
    let pod_template = &deployment.yaml["spec"]["template"];
    let pod = &pod_template["spec"];
    let matcher = container(pod, "matcher");
    let flags = arguments(matcher);
    check_secret_volumes(pod, &declared, "the matcher");
    // The matcher's own command-line parser takes the container's
    // arguments as they are.
    let args = items(&matcher["args"]).iter().filter_map(|a| a.as_str());
    if let Err(e) = Options::try_parse_from(std::iter::once("matcher").chain(args)) {
        panic!("the matcher refuses the Deployment's arguments: {e}");
    }

    // Files the matcher reads are keys of mounted, declared secrets.
    for flag in [
        "--secret-file",
        "--key-file",
        "--allocator-client-cert",
        "--allocator-client-key",
        "--allocator-ca",
    ] {
        secret_file(pod, matcher, value(&flags, flag), &declared);
    }
    let (matcher_key, _) = secret_file(pod, matcher, value(&flags, "--key-file"), &declared);
    let (server_key, _) = secret_file(
        fleet_pod,
        server,
        value(&server_flags, "--key-file"),
        &declared,
    );
    assert_eq!(matcher_key, server_key, "one netcode key for both");
    assert_eq!(
        value(&flags, "--protocol-id"),
        value(&server_flags, "--protocol-id")
    );

    // The allocator options name the Fleet.
    assert!(value(&flags, "--allocator-url").starts_with("https://"));
    assert_eq!(value(&flags, "--allocator-namespace"), fleet.namespace());
    let selectors = flags
        .get("--allocator-selector")
        .cloned()
        .unwrap_or_default();
    assert!(
        selectors.contains(&format!("agones.dev/fleet={}", fleet.name())),
        "{selectors:?}"
    );
    let port_name = value(&flags, "--allocator-port-name");
    assert!(
        items(&fleet_spec["ports"])
            .iter()
            .any(|p| p["name"].as_str() == Some(port_name)),
        "the Fleet has port {port_name}"
    );
    assert!(
        !flags.contains_key("--server"),
        "fleet mode lists no static servers"
    );

    // Its service account is declared.
    let account = pod["serviceAccountName"]
        .as_str()
        .expect("a service account");
    assert!(
        documents
            .iter()
            .any(|d| d.kind() == "ServiceAccount" && d.name() == account),
        "service account {account} is declared"
    );

    // The Service reaches the pods, on the port the matcher listens on.
    let labels = strings(&pod_template["metadata"]["labels"]);
    let selected = strings(&deployment.yaml["spec"]["selector"]["matchLabels"]);
    assert!(!selected.is_empty());
    let service = only(&documents, "Service");
    let service_selector = strings(&service.yaml["spec"]["selector"]);
    assert!(!service_selector.is_empty());
    for (what, selector) in [("Deployment", &selected), ("Service", &service_selector)] {
        for (key, value) in selector {
            assert_eq!(
                labels.get(key),
                Some(value),
                "the {what} selects {key}={value}, which the pods lack"
            );
        }
    }
    let listen_port: i64 = value(&flags, "--listen")
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let container_ports = items(&matcher["ports"]);
    for port in items(&service.yaml["spec"]["ports"]) {
        let target = &port["targetPort"];
        let found = container_ports.iter().find(|p| match target.as_str() {
            Some(name) => p["name"].as_str() == Some(name),
            None => p["containerPort"].as_i64() == target.as_i64(),
        });
        let found = found.unwrap_or_else(|| panic!("targetPort {target:?} is not declared"));
        assert_eq!(found["containerPort"].as_i64(), Some(listen_port));
    }
}

#[test]
fn the_walkthrough_creates_every_secret_the_pods_mount() {
    let documents = documents();
    let readme = std::fs::read_to_string(deploy_dir().join("README.md")).unwrap();
    // Shell commands continued over several lines, joined.
    let commands = readme.replace("\\\n", " ");
    for (name, keys) in secrets(&documents) {
        let command = commands
            .lines()
            .find(|line| line.contains("create secret") && line.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("README.md creates no secret {name}"));
        if !command.contains("create secret tls") {
            for key in keys {
                assert!(
                    command.contains(&format!("--from-file={key}=")),
                    "README.md: secret {name} is created without key {key}"
                );
            }
        }
    }
}

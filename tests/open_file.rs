//! End-to-end through the binary: the file open in the editor is a capped signal of its
//! own, never words of the question. With two roots, a file open in one root must not
//! lift that root's files (or any file that shares its name) over what the question
//! asks about in the other (issue #55, item 1).

use std::path::Path;

use copilot_ls_test_support::lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `web`: a web framework whose sessions module keeps cookies; `net`: an HTTP client
/// whose sessions module resolves redirects.
fn roots(parent: &Path) {
    let web = parent.join("web");
    write(
        &web,
        "web/sessions.py",
        "\"\"\"Sessions kept in signed cookies.\"\"\"\n\n\nclass SessionInterface:\n    \"\"\"How a session is opened and saved.\"\"\"\n\n    def should_set_cookie(self, app, session):\n        \"\"\"Whether the session cookie is sent with the response.\"\"\"\n        return session.modified or app.permanent\n\n    def get_cookie_name(self, app):\n        return app.session_cookie_name\n\n    def open_session(self, app, request):\n        raise NotImplementedError\n",
    );
    write(
        &web,
        "web/app.py",
        "class App:\n    def route(self, rule):\n        def decorator(f):\n            self.rules[rule] = f\n            return f\n        return decorator\n\n    def redirect(self, location, code=302):\n        \"\"\"A response that sends the client elsewhere.\"\"\"\n        return Response(status=code, headers={\"Location\": location})\n",
    );
    let net = parent.join("net");
    write(
        &net,
        "net/sessions.py",
        "\"\"\"A session keeps settings and connections across requests.\"\"\"\n\n\nclass SessionRedirectMixin:\n    def get_redirect_target(self, resp):\n        \"\"\"The location a redirect response points to.\"\"\"\n        return resp.headers.get(\"location\")\n\n    def resolve_redirects(self, resp, req, stream=False):\n        \"\"\"Follows redirect responses until one is not a redirect: each redirect is resolved here.\"\"\"\n        while resp.is_redirect:\n            url = self.get_redirect_target(resp)\n            resp = self.send(req.copy(url), allow_redirects=False)\n            yield resp\n",
    );
    write(
        &net,
        "net/models.py",
        "class Response:\n    @property\n    def is_redirect(self):\n        \"\"\"True if this response is a redirect that can be resolved.\"\"\"\n        return \"location\" in self.headers and self.status_code in (301, 302, 303, 307, 308)\n",
    );
    write(
        &net,
        "net/adapters.py",
        "class HTTPAdapter:\n    def send(self, request, timeout=None):\n        \"\"\"Sends the request over a pooled connection.\"\"\"\n        return self.pool.urlopen(request.method, request.url)\n",
    );
}

fn folder(path: &Path) -> Value {
    json!({"uri": file_uri(path), "name": path.file_name().unwrap().to_str().unwrap()})
}

fn cited(result: &Value) -> Vec<String> {
    result["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_file_open_in_one_root_does_not_outrank_what_the_question_asks_in_another() {
    let parent = tempfile::tempdir().unwrap();
    roots(parent.path());
    let (web, net) = (parent.path().join("web"), parent.path().join("net"));
    let mut client = LspClient::spawn(Path::new(BIN), parent.path(), &[]);
    client
        .request(
            "initialize",
            json!({
                "processId": null,
                "workspaceFolders": [folder(&web), folder(&net)],
                "capabilities": {"window": {"workDoneProgress": true}},
                "initializationOptions": {"provider": "none"},
            }),
        )
        .unwrap();
    client.notify("initialized", json!({}));
    // Asked of the whole index: the build's progress ends first.
    client.wait_for(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    let open = web.join("web/sessions.py");
    let uri = file_uri(&open);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
            "text": std::fs::read_to_string(&open).unwrap()}}),
    );
    let question = "where are redirects resolved?";
    let without = client
        .request("copilot/ask", json!({"question": question}))
        .unwrap();
    let with = client
        .request(
            "copilot/ask",
            json!({"question": question, "textDocument": {"uri": uri},
                "range": {"start": {"line": 6, "character": 0}, "end": {"line": 6, "character": 0}}}),
        )
        .unwrap();
    let (without, with) = (cited(&without), cited(&with));
    assert_eq!(without[0], "net/net/sessions.py", "{without:?}");
    assert_eq!(with[0], "net/net/sessions.py", "{with:?}");
    // The open file matches none of the question's words: it is not shown at all, as
    // without it.
    assert!(
        !with.iter().any(|p| p == "web/web/sessions.py"),
        "the open file was lifted over the question: {with:?}"
    );
    assert_eq!(with, without);
    client.shutdown();
}

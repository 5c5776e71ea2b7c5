mod support;
fn main() {
    if support::serve_if_asked() {}
}

use toolkit_browser::{Browser, BrowserConfig};
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let click = std::env::args().nth(2);
    let browser = Browser::launch(BrowserConfig::default()).await.unwrap();
    browser.navigate(&url).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let map = browser.page_map().await.unwrap();
    println!("{}", map.render());
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let m = browser.page_map().await.unwrap();
        println!(
            "map {:?} walk {:.2} ms, {} elements",
            t.elapsed(),
            m.walk_ms,
            m.elements.len()
        );
    }
    if let Some(c) = click {
        let e = map
            .elements
            .iter()
            .find(|e| e.render().contains(&c))
            .expect("element");
        println!("clicking {}", e.render());
        match browser.click(e.index).await {
            Ok(o) => println!("ok {:?}", o.element.render()),
            Err(err) => println!("err {err}"),
        }
        let typed = map
            .elements
            .iter()
            .find(|e| e.render().contains("Card number"));
        if let Some(f) = typed {
            match browser.type_text(f.index, "4242 4242", true).await {
                Ok(t) => println!("typed {:?}", t),
                Err(e) => println!("type err {e}"),
            }
        }
        let m = browser.page_map().await.unwrap();
        println!("{}", m.render());
    }
    browser.close().await.unwrap();
}

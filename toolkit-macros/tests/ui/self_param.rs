use toolkit_core::tool;

struct Counter {
    count: u32,
}

impl Counter {
    /// Reads the counter.
    #[tool]
    fn read(&self) -> u32 {
        self.count
    }
}

fn main() {}

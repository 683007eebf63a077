//! A registry of named handlers, looked up by route.

use std::collections::HashMap;
use std::fmt;

/// The error returned when a route has no handler.
#[derive(Debug, Clone, PartialEq)]
pub struct NotFound {
    pub route: String,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no handler for {}", self.route)
    }
}

/// Something that can answer a request.
pub trait Handler: Send + Sync {
    /// Answers one request.
    fn handle(&self, request: &str) -> String;
}

/// Handlers by route, with a fallback for routes that match none.
pub struct Registry<H: Handler> {
    routes: HashMap<String, H>,
    fallback: Option<H>,
    hits: u64,
}

impl<H: Handler> Registry<H> {
    /// Makes an empty registry.
    pub fn new() -> Self {
        Registry { routes: HashMap::new(), fallback: None, hits: 0 }
    }

    /// Registers `handler` for `route`, replacing any handler it had.
    pub fn insert(&mut self, route: impl Into<String>, handler: H) -> Option<H> {
        self.routes.insert(route.into(), handler)
    }

    /// Sets the handler used when no route matches.
    pub fn set_fallback(&mut self, handler: H) {
        self.fallback = Some(handler);
    }

    /// Finds the handler for `route`: an exact match first, then the longest prefix
    /// that ends at a slash, then the fallback.
    pub fn lookup(&mut self, route: &str) -> Result<&H, NotFound> {
        self.hits += 1;
        if let Some(handler) = self.routes.get(route) {
            return Ok(handler);
        }
        let mut best: Option<(&String, &H)> = None;
        for (prefix, handler) in &self.routes {
            let matches = route.starts_with(prefix.as_str())
                && (prefix.ends_with('/') || route[prefix.len()..].starts_with('/'));
            if matches && best.map_or(true, |(b, _)| prefix.len() > b.len()) {
                best = Some((prefix, handler));
            }
        }
        match best {
            Some((_, handler)) => Ok(handler),
            None => self.fallback.as_ref().ok_or_else(|| NotFound { route: route.to_string() }),
        }
    }

    /// Dispatches a request to its handler and returns the answer.
    pub fn dispatch(&mut self, route: &str, request: &str) -> Result<String, NotFound> {
        let handler = self.lookup(route)?;
        Ok(handler.handle(request))
    }

    /// How many lookups were made, found or not.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// The registered routes, sorted, for listing in diagnostics.
    pub fn routes(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.routes.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Handler for Echo {
        fn handle(&self, request: &str) -> String {
            request.to_string()
        }
    }

    #[test]
    fn prefix_match_stops_at_a_slash() {
        let mut r = Registry::new();
        r.insert("/api", Echo);
        assert!(r.lookup("/api/users").is_ok());
        assert!(r.lookup("/apiary").is_err());
    }
}

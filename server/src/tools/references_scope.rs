//! Which uses `find_references` keeps for a qualified name (`TokenBucket.refill`,
//! `TokenBucket::refill`): those that resolve to a definition of the name inside that
//! container, as far as the text shows without type inference.
//!
//! A use keeps when it is written `TokenBucket::refill` / `TokenBucket.refill`, when it
//! is `self.refill` / `this.refill` / `Self::refill` (or bare) inside the container's
//! body, or when nothing else in the workspace defines the name (then every use of it
//! means that one, whatever the receiver). A use written through another container that
//! defines the name (`Other::refill`), or through a value while other definitions exist
//! (`bucket.refill()` when `Cache::refill` exists too), is left out: the text cannot
//! tell which one it calls.

use super::error::ToolError;
use crate::syntax::Symbol;

/// The name asked for, and the containers it must be in (outermost first).
pub struct Wanted {
    pub name: String,
    pub containers: Vec<String>,
}

/// What a use is written through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Qualifier {
    /// Nothing: `refill()`.
    None,
    /// `self.`, `this.`, `Self::`, `cls.`: the enclosing type.
    SelfType,
    /// `Word::` or `word.` / `word->`: a type, a module or a value of that name.
    Word(String),
    /// An expression (`f().refill`, `a[0].refill`).
    Expression,
}

/// Parses `refill`, `TokenBucket.refill` or `TokenBucket::refill`.
pub fn parse(query: &str) -> Result<Wanted, ToolError> {
    let query = query.trim();
    let separator = if query.contains("::") { "::" } else { "." };
    let mut parts: Vec<String> = query
        .split(separator)
        .map(|part| part.trim().to_string())
        .collect();
    let name = parts.pop().unwrap_or_default();
    let identifier = |word: &str| {
        !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    parts.retain(|part| !part.is_empty());
    if !identifier(&name) || !parts.iter().all(|part| identifier(part)) {
        return Err(ToolError::Invalid(format!(
            "name must be an identifier, optionally after its container: {{\"name\": \"refill\"}}, \
             {{\"name\": \"TokenBucket.refill\"}}; got `{query}`"
        )));
    }
    Ok(Wanted {
        name,
        containers: parts,
    })
}

/// What the text right before the use at byte `start` qualifies it with.
pub fn qualifier(text: &str, start: usize) -> Qualifier {
    let before = text[..start].trim_end_matches([' ', '\t']);
    let rest = if let Some(rest) = before.strip_suffix("::") {
        rest
    } else if let Some(rest) = before
        .strip_suffix("?.")
        .or_else(|| before.strip_suffix("->"))
        .or_else(|| before.strip_suffix('.'))
    {
        rest
    } else {
        return Qualifier::None;
    };
    let rest = rest.trim_end_matches([' ', '\t', '\n', '\r']);
    let word_start = rest
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_' || *c == '$')
        .last()
        .map(|(at, _)| at);
    match word_start {
        Some(at) => match &rest[at..] {
            "self" | "this" | "Self" | "cls" => Qualifier::SelfType,
            word => Qualifier::Word(word.to_string()),
        },
        None => Qualifier::Expression,
    }
}

/// The types whose bodies hold 0-based `line`: classes, structs, traits and impl blocks
/// around it, and the container of a method around it defined apart from its type (a
/// Go receiver, C++'s `Bucket::refill`).
pub fn enclosing_types(symbols: &[Symbol], line: usize) -> Vec<String> {
    let mut types = Vec::new();
    for symbol in symbols {
        if symbol.line > line || line > symbol.end_line {
            continue;
        }
        if symbol.kind.is_type_like() {
            types.push(symbol.name.clone());
        } else if let Some(container) = &symbol.container {
            types.push(last_segment(container).to_string());
        }
    }
    types
}

fn last_segment(qualified: &str) -> &str {
    qualified.rsplit(['.', ':']).next().unwrap_or(qualified)
}

/// Decides uses against the definitions found.
pub struct Resolver {
    qualified: bool,
    containers: Vec<String>,
    /// Last segments of the containers of the wanted definitions.
    targets: Vec<String>,
    /// Last segments of the containers of the other definitions (`""` for none).
    others: Vec<String>,
}

impl Resolver {
    pub fn new<'a>(wanted: &Wanted, definitions: impl Iterator<Item = &'a Symbol>) -> Resolver {
        let containers: Vec<String> = wanted.containers.iter().map(|c| c.to_lowercase()).collect();
        let mut resolver = Resolver {
            qualified: !containers.is_empty(),
            containers,
            targets: Vec::new(),
            others: Vec::new(),
        };
        for definition in definitions {
            let container = definition
                .container
                .as_deref()
                .map(last_segment)
                .unwrap_or_default()
                .to_string();
            if resolver.is_target(definition) {
                resolver.targets.push(container);
            } else {
                resolver.others.push(container);
            }
        }
        if resolver.qualified && resolver.targets.is_empty() {
            // Defined outside the workspace (a library's type): its written name.
            if let Some(last) = wanted.containers.last() {
                resolver.targets.push(last.clone());
            }
        }
        resolver
    }

    /// Whether a definition is one asked for: in a container chain whose parts start
    /// with the given ones, in order, at any depth (as `find_symbol` matches).
    pub fn is_target(&self, definition: &Symbol) -> bool {
        if !self.qualified {
            return true;
        }
        let container = definition
            .container
            .as_deref()
            .unwrap_or_default()
            .to_lowercase();
        let mut chain = container
            .split("::")
            .flat_map(|part| part.split('.'))
            .filter(|part| !part.is_empty());
        self.containers
            .iter()
            .all(|wanted| chain.any(|part| part.starts_with(wanted.as_str())))
    }

    pub fn keeps(&self, qualifier: &Qualifier, enclosing: &[String]) -> bool {
        if !self.qualified {
            return true;
        }
        let unambiguous = self.others.is_empty();
        let inside = enclosing.iter().any(|t| self.targets.contains(t));
        match qualifier {
            Qualifier::Word(word) if self.targets.contains(word) => true,
            Qualifier::Word(word) if self.others.contains(word) => false,
            Qualifier::SelfType | Qualifier::None => inside || unambiguous,
            Qualifier::Word(_) | Qualifier::Expression => unambiguous,
        }
    }
}

//! placeholder
use super::*;
pub struct OpenAiProvider { config: ProviderConfig }
impl OpenAiProvider { pub fn new(config: ProviderConfig) -> Self { Self { config } } }
impl ChatModel for OpenAiProvider {
    fn complete<'a>(&'a self, _request: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(async move { Err(ProviderError::Decode("not implemented".into())) })
    }
    fn describe(&self) -> String { self.config.model.clone() }
}

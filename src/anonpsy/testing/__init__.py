"""Test tooling shipped with the package: a scripted OpenAI-compatible server for the LLM client."""

from anonpsy.testing.openai_server import MIXED_FAULTS, Fault, FaultMix, LoggedRequest, ScriptedOpenAIServer

__all__ = ["MIXED_FAULTS", "Fault", "FaultMix", "LoggedRequest", "ScriptedOpenAIServer"]

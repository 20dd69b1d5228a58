from tests.unit.service.helpers import harness

__all__ = ["harness"]

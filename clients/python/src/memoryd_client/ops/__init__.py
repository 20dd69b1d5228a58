"""Every RPC helper as a plain function returning a call description (``core.Unary`` or
``core.ServerStream``); the clients bind them (``memoryd_client.api``)."""

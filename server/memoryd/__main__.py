from memoryd.main import app

app()

oz.start("HDDS Datanode", []);

print("livebridge")

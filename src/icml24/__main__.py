from icml24._entry import main

main()

document.getElementById('show-schedule').addEventListener('click', (event) => {
  document.getElementById('schedule').classList.remove('hidden');
  
});
